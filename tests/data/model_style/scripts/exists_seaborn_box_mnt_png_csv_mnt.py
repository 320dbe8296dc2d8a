import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

import os
file = '/mnt/data/sales.csv' if os.path.exists('/mnt/data/sales.csv') else 'sales.csv'
df = pd.read_csv(file)
import seaborn as sns
fig, ax = plt.subplots()
sns.boxplot(data=df, x='region', y='sales', ax=ax)
df.head(10).to_csv('/mnt/data/top10.csv', index=False)
plt.savefig('/mnt/data/plot.png')

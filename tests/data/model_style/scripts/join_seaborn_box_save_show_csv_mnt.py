import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

import os
path = os.path.join('/mnt/data', 'sales.csv')
df = pd.read_csv(path)
import seaborn as sns
fig, ax = plt.subplots()
sns.boxplot(data=df, x='region', y='sales', ax=ax)
df.head(10).to_csv('/mnt/data/top10.csv', index=False)
plt.savefig('result.png')
plt.show()

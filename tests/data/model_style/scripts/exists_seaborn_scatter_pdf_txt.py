import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

import os
file = '/mnt/data/sales.csv' if os.path.exists('/mnt/data/sales.csv') else 'sales.csv'
df = pd.read_csv(file)
import seaborn as sns
fig, ax = plt.subplots()
sns.scatterplot(data=df, x='units', y='sales', hue='region', ax=ax)
with open('/mnt/data/report.txt', 'w') as f:
    f.write(df.head().to_string())
fig.savefig('report.pdf')

import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

df = pd.read_csv('/mnt/data/sales.csv')
import seaborn as sns
fig, ax = plt.subplots()
sns.boxplot(data=df, x='region', y='sales', ax=ax)
df.head(10).to_csv('/mnt/data/top10.csv', index=False)
plt.tight_layout()
plt.savefig('output.png', dpi=100)
plt.close()

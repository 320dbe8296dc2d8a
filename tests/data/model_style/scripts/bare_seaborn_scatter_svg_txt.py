import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

df = pd.read_csv('sales.csv')
import seaborn as sns
fig, ax = plt.subplots()
sns.scatterplot(data=df, x='units', y='sales', hue='region', ax=ax)
with open('/mnt/data/report.txt', 'w') as f:
    f.write(df.head().to_string())
plt.savefig('chart.svg')

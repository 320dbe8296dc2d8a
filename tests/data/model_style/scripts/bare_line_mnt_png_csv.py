import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

df = pd.read_csv('sales.csv')
pivot = df.pivot_table(index='month', columns='region', values='sales', sort=False)
fig, ax = plt.subplots(figsize=(9, 5))
for region in pivot.columns:
    ax.plot(pivot.index, pivot[region], marker='o', label=region)
ax.legend()
ax.grid(True, alpha=0.3)
ax.set_title('Sales by region')
df.describe().to_csv('summary.csv')
plt.savefig('/mnt/data/plot.png')

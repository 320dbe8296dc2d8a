import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

import os
file = '/mnt/data/sales.csv' if os.path.exists('/mnt/data/sales.csv') else 'sales.csv'
df = pd.read_csv(file)
pivot = df.pivot_table(index='month', columns='region', values='sales', sort=False)
fig, ax = plt.subplots(figsize=(9, 5))
for region in pivot.columns:
    ax.plot(pivot.index, pivot[region], marker='o', label=region)
ax.legend()
ax.grid(True, alpha=0.3)
ax.set_title('Sales by region')
df.describe().to_csv('summary.csv')
fig.savefig('sales_chart.png', dpi=150, bbox_inches='tight')

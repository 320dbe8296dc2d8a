import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

import os
file = '/mnt/data/sales.csv' if os.path.exists('/mnt/data/sales.csv') else 'sales.csv'
df = pd.read_csv(file)
totals = df.groupby('month', sort=False)['sales'].sum()
fig, ax = plt.subplots(figsize=(8, 5))
ax.bar(totals.index, totals.values, color='steelblue')
ax.set_title('Total sales by month')
ax.set_xlabel('Month')
ax.set_ylabel('Sales')
fig.savefig('sales_chart.png', dpi=150, bbox_inches='tight')

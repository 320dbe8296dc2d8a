import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

from io import StringIO
csv = '''month,region,sales,units
Jan,North,120,10
Feb,North,135,12
Mar,North,150,9
Jan,South,90,14
Feb,South,110,11
Mar,South,125,16
'''
df = pd.read_csv(StringIO(csv))
pivot = df.pivot_table(index='month', columns='region', values='sales', sort=False)
fig, ax = plt.subplots(figsize=(9, 5))
for region in pivot.columns:
    ax.plot(pivot.index, pivot[region], marker='o', label=region)
ax.legend()
ax.grid(True, alpha=0.3)
ax.set_title('Sales by region')
df.describe().to_csv('summary.csv')
plt.savefig('chart.jpg', dpi=80)

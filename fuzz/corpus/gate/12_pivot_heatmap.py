import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

pd.set_option('display.width', 120)
pd.options.display.max_rows = 50
df = pd.read_csv(srcpath('sales.csv'), parse_dates=['date'])
df['month'] = df['date'].dt.month
df['year'] = df['date'].dt.year
pivot = df.pivot_table(index='year', columns='month', values='revenue', aggfunc='sum', fill_value=0)
print(pivot.describe())
fig, ax = plt.subplots(figsize=(12, 4))
im = ax.imshow(pivot.values, cmap='YlGn', aspect='auto')
ax.set_xticks(np.arange(pivot.shape[1]))
ax.set_xticklabels(pivot.columns)
ax.set_yticks(np.arange(pivot.shape[0]))
ax.set_yticklabels(pivot.index)
for (r, c), v in np.ndenumerate(pivot.values):
    ax.text(c, r, f"{v/1000:.1f}k", ha='center', va='center', fontsize=7)
fig.colorbar(im)
fig.savefig(OUT, bbox_inches='tight')

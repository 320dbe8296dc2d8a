import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

df = pd.read_csv('/mnt/data/sales.csv')
fig, axes = plt.subplots(2, 2, figsize=(10, 8))
for ax, (region, g) in zip(axes.flat, df.groupby('region')):
    ax.plot(g['month'], g['sales'])
    ax.set_title(region)
axes[1, 1].hist(df['units'])
fig.suptitle('Overview')
fig.tight_layout()
fig.savefig('overview.png', dpi=120)

import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

from pathlib import Path
df = pd.read_csv(Path('sales.csv'))
pivot = df.pivot_table(index='month', columns='region', values='sales', sort=False)
fig, ax = plt.subplots()
pivot.plot(ax=ax, marker='o')
fig.savefig(Path('path_line.png'), dpi=100)
df.describe().to_csv(Path('path_summary.csv'))

import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

from pathlib import Path
DATA_DIR = Path('/mnt/data')
df = pd.read_csv(DATA_DIR / 'sales.csv')
totals = df.groupby('month', sort=False)['sales'].sum()
fig, ax = plt.subplots(figsize=(8, 5))
ax.bar(totals.index, totals.values)
ax.set_title('Total sales by month')
output_path = DATA_DIR / 'path_bar.png'
plt.savefig(output_path)
print(f'Saved to {output_path.name}')

import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

from pathlib import Path
data_dir = Path('/mnt/data') if Path('/mnt/data').exists() else Path('.')
csv_path = data_dir / 'temps.csv'
if not csv_path.is_file():
    raise FileNotFoundError(csv_path)
df = pd.read_csv(csv_path, parse_dates=['date'])
print(csv_path.name, csv_path.stem, csv_path.suffix, csv_path.parent == data_dir)
fig, ax = plt.subplots(figsize=(10, 4))
for city, g in df.groupby('city'):
    ax.plot(g['date'], g['temp'], label=city)
ax.legend()
fig.autofmt_xdate()
fig.savefig(data_dir / f'{csv_path.stem}_plot.png')

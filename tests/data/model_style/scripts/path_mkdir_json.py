import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

from pathlib import Path
import json
out_dir = Path('/mnt/data')
out_dir.mkdir(parents=True, exist_ok=True)
df = pd.read_csv(out_dir / 'sales.csv')
share = df.groupby('region')['sales'].sum()
fig, ax = plt.subplots(figsize=(6, 6))
ax.pie(share, labels=share.index, autopct='%1.1f%%')
fig.savefig(out_dir / 'mkdir_pie.png')
with open(out_dir / 'share.json', 'w') as f:
    json.dump({k: int(v) for k, v in share.items()}, f, indent=2)

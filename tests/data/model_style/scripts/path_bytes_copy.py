import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

from pathlib import Path
raw = Path('sales.csv').read_bytes()
print(len(raw), Path('sales.csv').stat().st_size)
Path('sales_copy.csv').write_bytes(raw)
df = pd.read_csv(Path('sales_copy.csv'))
plt.scatter(df['units'], df['sales'])
plt.savefig('copy_scatter.png')

import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

from pathlib import Path
import seaborn as sns
src = Path('/mnt/data/sales.csv')
df = pd.read_csv(src)
sns.boxplot(data=df, x='region', y='sales')
plt.savefig(src.with_suffix('.png').name)
df.head().to_csv(src.with_name('head.csv'), index=False)

import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

import pathlib
base = pathlib.Path.cwd()
df = pd.read_csv(base / 'sales.csv')
df.groupby('region')['units'].sum().plot(kind='barh')
plt.tight_layout()
plt.savefig(pathlib.Path('units_by_region.png'))

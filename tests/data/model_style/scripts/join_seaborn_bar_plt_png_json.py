import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

import os
path = os.path.join('/mnt/data', 'sales.csv')
df = pd.read_csv(path)
import seaborn as sns
sns.set_theme(style='whitegrid')
fig, ax = plt.subplots(figsize=(8, 4))
sns.barplot(data=df, x='month', y='sales', hue='region', ax=ax, errorbar=None)
ax.set_title('Monthly sales')
import json
stats = {'rows': int(len(df)), 'columns': list(df.columns)}
with open('stats.json', 'w') as f:
    json.dump(stats, f, indent=2)
plt.savefig('novice.png')

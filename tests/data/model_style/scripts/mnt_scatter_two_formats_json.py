import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

df = pd.read_csv('/mnt/data/sales.csv')
fig, ax = plt.subplots()
ax.scatter(df['units'], df['sales'], c=df['sales'], cmap='viridis', alpha=0.8)
ax.set_xlabel('Units')
ax.set_ylabel('Sales')
ax.set_title('Units vs sales')
import json
stats = {'rows': int(len(df)), 'columns': list(df.columns)}
with open('stats.json', 'w') as f:
    json.dump(stats, f, indent=2)
plt.savefig('figure.png')
plt.savefig('figure.svg')

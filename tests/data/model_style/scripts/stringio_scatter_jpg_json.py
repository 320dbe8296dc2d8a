import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

from io import StringIO
csv = '''month,region,sales,units
Jan,North,120,10
Feb,North,135,12
Mar,North,150,9
Jan,South,90,14
Feb,South,110,11
Mar,South,125,16
'''
df = pd.read_csv(StringIO(csv))
fig, ax = plt.subplots()
ax.scatter(df['units'], df['sales'], c=df['sales'], cmap='viridis', alpha=0.8)
ax.set_xlabel('Units')
ax.set_ylabel('Sales')
ax.set_title('Units vs sales')
import json
stats = {'rows': int(len(df)), 'columns': list(df.columns)}
with open('stats.json', 'w') as f:
    json.dump(stats, f, indent=2)
plt.savefig('chart.jpg', dpi=80)

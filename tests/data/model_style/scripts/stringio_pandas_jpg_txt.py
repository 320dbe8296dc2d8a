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
ax = df.groupby('region')['sales'].sum().plot(kind='bar', figsize=(6, 4), rot=0)
ax.set_ylabel('Sales')
fig = ax.figure
plt.tight_layout()
with open('/mnt/data/report.txt', 'w') as f:
    f.write(df.head().to_string())
plt.savefig('chart.jpg', dpi=80)

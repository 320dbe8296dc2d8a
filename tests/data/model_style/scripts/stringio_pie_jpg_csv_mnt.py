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
share = df.groupby('region')['sales'].sum()
fig, ax = plt.subplots(figsize=(6, 6))
ax.pie(share, labels=share.index, autopct='%1.1f%%', startangle=90)
ax.set_title('Share of sales')
df.head(10).to_csv('/mnt/data/top10.csv', index=False)
plt.savefig('chart.jpg', dpi=80)

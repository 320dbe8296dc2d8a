import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

import os
file = '/mnt/data/sales.csv' if os.path.exists('/mnt/data/sales.csv') else 'sales.csv'
df = pd.read_csv(file)
share = df.groupby('region')['sales'].sum()
fig, ax = plt.subplots(figsize=(6, 6))
ax.pie(share, labels=share.index, autopct='%1.1f%%', startangle=90)
ax.set_title('Share of sales')
df.head(10).to_csv('/mnt/data/top10.csv', index=False)
fig.savefig('sales_chart.png', dpi=150, bbox_inches='tight')

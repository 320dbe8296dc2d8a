import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

df = pd.read_csv('/mnt/data/sales.csv')
share = df.groupby('region')['sales'].sum()
fig, ax = plt.subplots(figsize=(6, 6))
ax.pie(share, labels=share.index, autopct='%1.1f%%', startangle=90)
ax.set_title('Share of sales')
df.head(10).to_csv('/mnt/data/top10.csv', index=False)
plt.savefig('figure.png')
plt.savefig('figure.svg')

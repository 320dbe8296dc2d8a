import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

df = pd.read_csv('/mnt/data/sales.csv')
fig, ax = plt.subplots()
ax.hist(df['sales'], bins=12, edgecolor='black')
ax.set_title('Distribution of sales')
plt.savefig('chart.jpg', dpi=80)

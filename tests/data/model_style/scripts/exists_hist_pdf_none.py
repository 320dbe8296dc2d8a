import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

import os
file = '/mnt/data/sales.csv' if os.path.exists('/mnt/data/sales.csv') else 'sales.csv'
df = pd.read_csv(file)
fig, ax = plt.subplots()
ax.hist(df['sales'], bins=12, edgecolor='black')
ax.set_title('Distribution of sales')
fig.savefig('report.pdf')

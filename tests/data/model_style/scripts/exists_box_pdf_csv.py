import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

import os
file = '/mnt/data/sales.csv' if os.path.exists('/mnt/data/sales.csv') else 'sales.csv'
df = pd.read_csv(file)
fig, ax = plt.subplots()
df.boxplot(column='sales', by='region', ax=ax)
plt.suptitle('')
ax.set_title('Sales by region')
df.describe().to_csv('summary.csv')
fig.savefig('report.pdf')

import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

import os
path = os.path.join('/mnt/data', 'sales.csv')
df = pd.read_csv(path)
fig, ax = plt.subplots()
df.boxplot(column='sales', by='region', ax=ax)
plt.suptitle('')
ax.set_title('Sales by region')
df.describe().to_csv('summary.csv')
plt.savefig('result.png')
plt.show()

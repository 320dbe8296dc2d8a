import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

df = pd.read_csv('/mnt/data/sales.csv')
fig, ax = plt.subplots()
df.boxplot(column='sales', by='region', ax=ax)
plt.suptitle('')
ax.set_title('Sales by region')
df.describe().to_csv('summary.csv')
plt.tight_layout()
plt.savefig('output.png', dpi=100)
plt.close()

import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

import os
path = os.path.join('/mnt/data', 'sales.csv')
df = pd.read_csv(path)
ax = df.groupby('region')['sales'].sum().plot(kind='bar', figsize=(6, 4), rot=0)
ax.set_ylabel('Sales')
fig = ax.figure
plt.tight_layout()
with open('/mnt/data/report.txt', 'w') as f:
    f.write(df.head().to_string())
output_path = '/mnt/data/sales_by_month.png'
plt.savefig(output_path)
print(f'Saved to {output_path}')

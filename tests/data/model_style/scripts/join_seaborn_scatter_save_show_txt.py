import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

import os
path = os.path.join('/mnt/data', 'sales.csv')
df = pd.read_csv(path)
import seaborn as sns
fig, ax = plt.subplots()
sns.scatterplot(data=df, x='units', y='sales', hue='region', ax=ax)
with open('/mnt/data/report.txt', 'w') as f:
    f.write(df.head().to_string())
plt.savefig('result.png')
plt.show()

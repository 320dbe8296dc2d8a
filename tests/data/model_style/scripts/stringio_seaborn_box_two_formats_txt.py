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
import seaborn as sns
fig, ax = plt.subplots()
sns.boxplot(data=df, x='region', y='sales', ax=ax)
with open('/mnt/data/report.txt', 'w') as f:
    f.write(df.head().to_string())
plt.savefig('figure.png')
plt.savefig('figure.svg')

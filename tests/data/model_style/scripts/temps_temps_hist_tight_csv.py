import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

df = pd.read_csv('/mnt/data/temps.csv', parse_dates=['date'])
import seaborn as sns
fig, ax = plt.subplots()
sns.histplot(data=df, x='temp', hue='city', bins=15, ax=ax)
df.describe().to_csv('summary.csv')
plt.tight_layout()
plt.savefig('output.png', dpi=100)
plt.close()

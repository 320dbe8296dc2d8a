import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

df = pd.read_csv('/mnt/data/temps.csv', parse_dates=['date'])
import seaborn as sns
fig, ax = plt.subplots(figsize=(10, 4))
sns.lineplot(data=df, x='date', y='temp', hue='city', ax=ax)
fig.autofmt_xdate()
plt.tight_layout()
plt.savefig('output.png', dpi=100)
plt.close()

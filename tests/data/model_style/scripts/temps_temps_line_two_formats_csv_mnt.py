import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

df = pd.read_csv('/mnt/data/temps.csv', parse_dates=['date'])
fig, ax = plt.subplots(figsize=(10, 4))
for city, g in df.groupby('city'):
    ax.plot(g['date'], g['temp'], label=city)
ax.legend()
fig.autofmt_xdate()
ax.set_ylabel('°C')
df.head(10).to_csv('/mnt/data/top10.csv', index=False)
plt.savefig('figure.png')
plt.savefig('figure.svg')

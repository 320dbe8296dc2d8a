import pandas as pd
import matplotlib.pyplot as plt

df = pd.read_csv(srcpath('measurements.csv'))
hot = df.query('temperature > 30 and humidity < 0.5')
cold = df[df['temperature'] < 0]
df['ratio'] = df.eval('pressure / temperature')
counts = df['station'].value_counts()
top = counts.nlargest(5).index.tolist()
sub = df[df['station'].isin(top)]
fig, ax = plt.subplots()
for station, grp in sub.groupby('station'):
    ax.plot(grp['time'], grp['temperature'], label=str(station))
ax.axhline(30, color='red', ls=':')
ax.legend(title='station')
ax.set_title(f"{len(hot)} hot, {len(cold)} cold readings")
plt.savefig(OUT)

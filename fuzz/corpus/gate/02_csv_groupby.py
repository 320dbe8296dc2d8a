import pandas as pd
import matplotlib.pyplot as plt

df = pd.read_csv(srcpath('data.csv'))
df['date'] = pd.to_datetime(df['date'])
df = df.dropna(subset=['value'])
summary = df.groupby('category').agg(mean=('value', 'mean'), std=('value', 'std'), n=('value', 'count')).reset_index()
summary = summary.sort_values('mean', ascending=False)
print(summary.head())

fig, ax = plt.subplots(figsize=(10, 5))
ax.bar(summary['category'], summary['mean'], yerr=summary['std'], capsize=4, color='steelblue')
for i, row in summary.iterrows():
    ax.text(i, row['mean'], "{:.2f}".format(row['mean']), ha='center', va='bottom')
ax.set_ylabel('Mean value')
plt.xticks(rotation=45, ha='right')
plt.tight_layout()
plt.savefig(OUT)

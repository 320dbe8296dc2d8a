# mistake: a dict key with different spelling than the keys it holds
# expect: 'East'
# expect: Did you mean: 'east'?
# expect: keys: 'north', 'south', 'east', 'west'
# fix: colors[r.title()] => colors[r]
colors = {'north': 'tab:blue', 'south': 'tab:orange', 'east': 'tab:green', 'west': 'tab:red'}
df = pd.read_csv(srcpath('sales.csv'))
for r, part in df.groupby('region'):
    plt.plot(part['revenue'].values, color=colors[r.title()], label=r)
plt.legend()
plt.savefig(OUT)

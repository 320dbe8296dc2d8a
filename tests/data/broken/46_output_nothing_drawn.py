# mistake: axes set up (labels only: a title alone is something drawn) but the data never drawn
# expect: nothing
# expect: plt.savefig(OUT)
# fix: ax.set_ylabel('revenue') => ax.set_ylabel('revenue'); ax.plot(df['revenue'].values)
df = pd.read_csv(srcpath('sales.csv'))
fig, ax = plt.subplots()
ax.set_xlabel('month')
ax.set_ylabel('revenue')
fig.savefig(OUT)

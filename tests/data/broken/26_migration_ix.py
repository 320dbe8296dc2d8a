# mistake: DataFrame.ix, removed in pandas 1.0
# expect: .loc
# expect: .iloc
# fix: df.ix[:20, 'revenue'] => df.loc[:20, 'revenue']
df = pd.read_csv(srcpath('sales.csv'))
plt.plot(df.ix[:20, 'revenue'])
plt.savefig(OUT)

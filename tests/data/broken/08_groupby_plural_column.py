# mistake: groupby on a column name that does not exist (plural)
# expect: 'regions'
# expect: Did you mean: 'region'?
# fix: groupby('regions') => groupby('region')
df = pd.read_csv(srcpath('sales.csv'))
by_region = df.groupby('regions')['revenue'].sum()
by_region.plot(kind='bar')
plt.savefig(OUT)

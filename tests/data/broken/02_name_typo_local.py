# mistake: a variable used under a slightly different name than it was defined
# expect: name 'total' is not defined
# expect: Did you mean: 'totals'?
# fix: plt.bar(df['region'].unique(), total) => plt.bar(df['region'].unique(), totals)
df = pd.read_csv(srcpath('sales.csv'))
totals = df.groupby('region', sort=False)['revenue'].sum().values
plt.bar(df['region'].unique(), total)
plt.savefig(OUT)

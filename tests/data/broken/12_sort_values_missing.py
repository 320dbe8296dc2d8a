# mistake: sort_values by a column that does not exist
# expect: 'Units'
# expect: Did you mean: 'units'?
# fix: sort_values('Units') => sort_values('units')
df = pd.read_csv(srcpath('sales.csv'))
top = df.sort_values('Units').tail(10)
plt.barh(top['product'] + ' ' + top['region'], top['units'])
plt.savefig(OUT)

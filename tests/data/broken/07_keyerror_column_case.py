# mistake: a column name with the wrong capitalisation
# expect: 'Revenue'
# expect: Did you mean: 'revenue'?
# expect: columns: 'date', 'region', 'product', 'revenue', 'units'
# forbid: print(df.columns)
# fix: df['Revenue'] => df['revenue']
df = pd.read_csv(srcpath('sales.csv'))
plt.plot(df['date'], df['Revenue'])
plt.savefig(OUT)

# mistake: arithmetic on a column that holds text ('sold out')
# expect: 'stock'
# expect: 'sold out'
# expect: pd.to_numeric
# fix: df['stock'] * 1.1 => pd.to_numeric(df['stock'], errors='coerce') * 1.1
df = pd.read_csv(srcpath('prices.csv'))
df['target'] = df['stock'] * 1.1
plt.plot(df['target'].values)
plt.savefig(OUT)

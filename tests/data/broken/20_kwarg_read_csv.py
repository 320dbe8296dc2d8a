# mistake: parse_date instead of parse_dates
# expect: pd.read_csv() got an unexpected keyword argument 'parse_date'
# expect: Did you mean: 'parse_dates'?
# fix: parse_date= => parse_dates=
df = pd.read_csv(srcpath('sales.csv'), parse_date=['date'])
plt.plot(df['date'], df['units'])
plt.savefig(OUT)

# mistake: parse_dates names a column that is not in the file
# expect: 'Date'
# expect: Did you mean: 'date'?
# expect: 'region'
# fix: parse_dates=['Date'] => parse_dates=['date']
df = pd.read_csv(srcpath('sales.csv'), parse_dates=['Date'])
plt.plot(df['date'], df['revenue'])
plt.savefig(OUT)

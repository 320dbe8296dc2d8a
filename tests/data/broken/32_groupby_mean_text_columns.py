# mistake: mean over every column of a frame that has text columns
# expect: numeric_only=True
# expect: 'product'
# fix: .mean() => .mean(numeric_only=True)
df = pd.read_csv(srcpath('sales.csv'))
means = df.groupby('region').mean()
means['revenue'].plot(kind='bar')
plt.savefig(OUT)

# mistake: a numeric-looking column that was read as text (thousands separators)
# expect: 'price'
# expect: '1,809.50'
# expect: pd.to_numeric
# fix: df = pd.read_csv(srcpath('prices.csv')) => df = pd.read_csv(srcpath('prices.csv'), thousands=',')
df = pd.read_csv(srcpath('prices.csv'))
avg = df.groupby('item')['price'].mean()
avg.plot(kind='bar')
plt.savefig(OUT)

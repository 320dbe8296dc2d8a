# mistake: seaborn used without importing it
# expect: name 'sns' is not defined
# expect: seaborn
# expect: plt.
# fix: sns.histplot(df['revenue']) => plt.hist(df['revenue'])
df = pd.read_csv(srcpath('sales.csv'))
sns.histplot(df['revenue'])
plt.savefig(OUT)

# mistake: the figure saved to a file name of its own choosing
# expect: 'chart.png'
# expect: plt.savefig(OUT)
# fix: plt.savefig('chart.png') => plt.savefig(OUT)
df = pd.read_csv(srcpath('sales.csv'))
df.groupby('region')['revenue'].sum().plot(kind='bar')
plt.savefig('chart.png')

# mistake: the figure saved in a format matplotlib cannot write
# expect: Format 'bmp' is not supported
# expect: png
# fix: plt.savefig('chart.bmp') => plt.savefig('chart.png')
df = pd.read_csv(srcpath('sales.csv'))
df.groupby('region')['revenue'].sum().plot(kind='bar')
plt.savefig('chart.bmp')

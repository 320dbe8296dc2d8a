# mistake: selecting a list of columns, one of which is misspelt
# expect: 'reveneu'
# expect: Did you mean: 'revenue'?
# fix: 'reveneu' => 'revenue'
df = pd.read_csv(srcpath('sales.csv'))
sub = df[['units', 'reveneu']]
plt.scatter(sub['units'], sub['revenue'])
plt.savefig(OUT)

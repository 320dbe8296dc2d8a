# mistake: iteritems, removed in pandas 2.0
# expect: .items()
# fix: .iteritems() => .items()
df = pd.read_csv(srcpath('sales.csv'))
for name, col in df[['revenue', 'units']].iteritems():
    plt.plot(col.values, label=name)
plt.legend()
plt.savefig(OUT)

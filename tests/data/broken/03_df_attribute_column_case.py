# mistake: a column read as an attribute with the wrong case
# expect: 'Units'
# expect: 'units'
# expect: columns: 'date', 'region', 'product', 'revenue', 'units'
# fix: df.Units => df.units
df = pd.read_csv(srcpath('sales.csv'))
plt.hist(df.Units, bins=20)
plt.savefig(OUT)

# mistake: DataFrame.append, removed in pandas 2.0
# expect: pd.concat
# expect: pandas 2.0
# fix: df = df.append(extra, ignore_index=True) => df = pd.concat([df, extra], ignore_index=True)
df = pd.read_csv(srcpath('sales.csv'))
extra = pd.DataFrame({'date': ['2027-01-01'], 'region': ['north'], 'product': ['gears'], 'revenue': [1000.0], 'units': [50]})
df = df.append(extra, ignore_index=True)
plt.plot(df['revenue'].values)
plt.savefig(OUT)

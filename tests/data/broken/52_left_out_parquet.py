# mistake: a Parquet file, whose engine the sandbox leaves out
# expect: df.to_csv('name.csv')
# forbid: Only the allowed modules can be imported
# fix: df.to_parquet('sales.parquet') => df.to_csv('sales.csv', index=False)
df = pd.read_csv(srcpath('sales.csv'))
df.to_parquet('sales.parquet')
df.plot(x='date', y='units')
plt.savefig(OUT)

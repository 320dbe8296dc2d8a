# mistake: reading an input with open() and a bare name
# expect: pd.read_csv(srcpath(
# fix: with open('sales.csv') as f:\n    header = f.readline() => header = ', '.join(pd.read_csv(srcpath('sales.csv'), nrows=0).columns)
with open('sales.csv') as f:
    header = f.readline()
plt.title(header)
plt.plot([1, 2])
plt.savefig(OUT)

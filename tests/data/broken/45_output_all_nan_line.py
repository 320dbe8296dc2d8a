# mistake: a column converted to numbers that were all text, so every value is NaN
# expect: NaN
# expect: line 8
# fix: df['region'], errors => df['revenue'], errors
df = pd.read_csv(srcpath('sales.csv'))
y = pd.to_numeric(df['region'], errors='coerce')
fig, ax = plt.subplots()
ax.plot(np.arange(len(y)), y, label='revenue')
ax.legend()
fig.savefig(OUT)

# mistake: a misspelt column inside `with pd.ExcelWriter(...)`, whose exit raises its own error over it
# expect: KeyError at line 8
# expect: Did you mean: 'revenue'?
# expect: leaving the `with` block at line 7
# fix: df['revenu'] => df['revenue']
df = pd.read_csv(srcpath('sales.csv'))
with pd.ExcelWriter('sales.xlsx', engine='openpyxl') as writer:
    df['share'] = df['revenu'] / df['revenue'].sum()
    df.to_excel(writer, sheet_name='Sales', index=False)
df.plot(x='date', y='share')
plt.savefig(OUT)

# mistake: the sheet name passed by position, keyword-only since pandas 3.0
# expect: keyword-only
# expect: sheet_name='Summary'
# fix: df.to_excel(writer, 'Sales', index=False) => df.to_excel(writer, sheet_name='Sales', index=False)
df = pd.read_csv(srcpath('sales.csv'))
with pd.ExcelWriter('sales.xlsx', engine='openpyxl') as writer:
    df.to_excel(writer, 'Sales', index=False)
df.plot(x='date', y='units')
plt.savefig(OUT)

# mistake: openpyxl's sheet API on pandas' default writer (XlsxWriter when no engine is named)
# expect: column_dimensions is openpyxl's
# expect: engine='openpyxl'
# fix: pd.ExcelWriter('sales.xlsx') => pd.ExcelWriter('sales.xlsx', engine='openpyxl')
df = pd.read_csv(srcpath('sales.csv'))
with pd.ExcelWriter('sales.xlsx') as writer:
    df.to_excel(writer, sheet_name='Sales', index=False)
    writer.sheets['Sales'].column_dimensions['A'].width = 14
df.plot(x='date', y='units')
plt.savefig(OUT)

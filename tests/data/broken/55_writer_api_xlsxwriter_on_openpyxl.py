# mistake: XlsxWriter's formats asked of an openpyxl writer
# expect: add_format is XlsxWriter's
# expect: engine='xlsxwriter'
# fix: engine='openpyxl' => engine='xlsxwriter'
df = pd.read_csv(srcpath('sales.csv'))
with pd.ExcelWriter('sales.xlsx', engine='openpyxl') as writer:
    df.to_excel(writer, sheet_name='Sales', index=False)
    money = writer.book.add_format({'num_format': '#,##0.00'})
    writer.sheets['Sales'].set_column(3, 3, 12, money)
df.plot(x='date', y='units')
plt.savefig(OUT)

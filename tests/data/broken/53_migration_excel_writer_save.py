# mistake: ExcelWriter.save(), removed in pandas 2.0
# expect: writer.close()
# expect: pandas 2.0
# fix: writer.save() => writer.close()
df = pd.read_csv(srcpath('sales.csv'))
writer = pd.ExcelWriter('sales.xlsx', engine='openpyxl')
df.to_excel(writer, sheet_name='Sales', index=False)
writer.save()
df.plot(x='date', y='units')
plt.savefig(OUT)

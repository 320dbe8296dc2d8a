# mistake: pandas' Styler, which needs a template engine the sandbox leaves out
# expect: needs jinja2
# expect: format cells with openpyxl
# forbid: Did you mean
# fix: styled = df.style.background_gradient(subset=['units']) => styled = df
df = pd.read_csv(srcpath('sales.csv'))
styled = df.style.background_gradient(subset=['units'])
styled.to_excel('sales_styled.xlsx')
df.plot(x='date', y='units')
plt.savefig(OUT)

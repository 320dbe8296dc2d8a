# mistake: reading an input by a name that is not among the inputs
# expect: no input named 'sales_2026.csv'
# expect: 'sales.csv'
# fix: open('sales_2026.csv') => open('sales.csv')
with open('sales_2026.csv') as f:
    header = f.readline()
plt.title(header)
plt.plot([1, 2])
plt.savefig(OUT)

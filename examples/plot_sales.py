# Revenue per region and product from a CSV: a pandas groupby bar chart.
import pandas as pd

df = pd.read_csv(srcpath('sales.csv'))
table = df.groupby(['region', 'product'])['revenue'].sum().unstack()
ax = table.plot(kind='bar', figsize=(7, 4), rot=0)
ax.set_ylabel('revenue (EUR)')
ax.set_title('Revenue by region, 2026')
plt.tight_layout()
plt.savefig(OUT, dpi=120)
print(f"{len(df)} rows, total revenue {df['revenue'].sum():.2f}")

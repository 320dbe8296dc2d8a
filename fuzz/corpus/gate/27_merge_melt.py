import pandas as pd
import matplotlib.pyplot as plt

left = pd.read_csv(srcpath('left.csv'))
right = pd.read_csv(srcpath('right.csv'))  # was read_excel('right.xlsx'): openpyxl is not installed
merged = pd.merge(left, right, on='id', how='inner', validate='one_to_one')
long = merged.melt(id_vars=['id'], value_vars=['a', 'b', 'c'], var_name='metric', value_name='value')
stats = long.groupby('metric')['value'].describe()
print(stats.round(2).to_string())
ax = long.boxplot(column='value', by='metric', grid=False)
ax.figure.suptitle('')
ax.set_title('Values by metric')
plt.savefig(OUT)

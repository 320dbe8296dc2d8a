import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

from io import StringIO
csv = '''month,region,sales,units
Jan,North,120,10
Feb,North,135,12
Mar,North,150,9
Jan,South,90,14
Feb,South,110,11
Mar,South,125,16
'''
df = pd.read_csv(StringIO(csv))
fig, ax = plt.subplots()
df.boxplot(column='sales', by='region', ax=ax)
plt.suptitle('')
ax.set_title('Sales by region')
df.describe().to_csv('summary.csv')
plt.savefig('figure.png')
plt.savefig('figure.svg')

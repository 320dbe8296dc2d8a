import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

import seaborn as sns
df = pd.read_csv('sales.csv')
corr = df[['sales', 'units']].corr()
sns.heatmap(corr, annot=True, cmap='coolwarm')
plt.savefig('corr.png')

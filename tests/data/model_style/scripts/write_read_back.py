import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

df = pd.read_csv('sales.csv')
df.groupby('region')['sales'].sum().to_csv('totals.csv')
back = pd.read_csv('totals.csv')
plt.bar(back['region'], back['sales'])
plt.savefig('totals.png')

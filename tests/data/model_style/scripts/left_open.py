import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

df = pd.read_csv('sales.csv')
plt.plot(df['sales'])
plt.title('Sales')

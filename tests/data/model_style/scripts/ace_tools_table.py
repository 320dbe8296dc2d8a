import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

import ace_tools as tools
df = pd.read_csv('/mnt/data/sales.csv')
summary = df.groupby('region')['sales'].agg(['sum', 'mean']).reset_index()
tools.display_dataframe_to_user(name='Sales summary', dataframe=summary)
summary.plot(x='region', y='sum', kind='bar')
plt.savefig('/mnt/data/summary.png')

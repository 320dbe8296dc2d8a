import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

df = pd.read_csv('/mnt/data/sales.csv')
for region, g in df.groupby('region'):
    plt.figure()
    plt.plot(g['month'], g['sales'])
    plt.title(region)
    plt.show()

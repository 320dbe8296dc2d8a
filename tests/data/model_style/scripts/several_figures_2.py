import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

df = pd.read_csv('sales.csv')
fig0, ax0 = plt.subplots()
sub = df[df['region'] == 'North']
ax0.plot(sub['month'], sub['sales'])
ax0.set_title('North')
fig0.savefig('out_north.png')
fig1, ax1 = plt.subplots()
sub = df[df['region'] == 'South']
ax1.plot(sub['month'], sub['sales'])
ax1.set_title('South')
fig1.savefig('out_south.png')

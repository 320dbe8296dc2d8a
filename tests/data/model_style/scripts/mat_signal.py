import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

from scipy.io import loadmat
m = loadmat('data.mat')
t, s = m['t'].ravel(), m['signal'].ravel()
plt.figure(figsize=(10, 3))
plt.plot(t, s)
plt.xlabel('t (s)')
plt.savefig('signal.png')

import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

scan = np.load('scan.npy')
np.save('scan_mean.npy', scan.mean(axis=0))
plt.plot(scan.mean(axis=0))
plt.savefig('mean.png')

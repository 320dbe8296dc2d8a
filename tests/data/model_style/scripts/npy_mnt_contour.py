import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

scan = np.load('/mnt/data/scan.npy')
fig, ax = plt.subplots()
cs = ax.contourf(scan, levels=12)
fig.colorbar(cs)
fig.savefig('/mnt/data/contour.png')

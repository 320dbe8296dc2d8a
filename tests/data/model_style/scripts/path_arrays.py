import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

from pathlib import Path
from scipy.io import loadmat
base = Path('/mnt/data')
scan = np.load(base / 'scan.npy')
m = loadmat(Path('data.mat'))
values = np.loadtxt(base / 'values.txt')
fig, axes = plt.subplots(1, 3, figsize=(12, 4))
axes[0].imshow(scan, aspect='auto')
axes[1].plot(m['t'].ravel(), m['signal'].ravel())
axes[2].hist(values, bins=15)
fig.tight_layout()
fig.savefig(Path('arrays.png'))

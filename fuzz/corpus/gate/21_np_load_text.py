import numpy as np
import matplotlib.pyplot as plt
import json

arr = np.load(srcpath('weights.npy'))
tbl = np.loadtxt(srcpath('table.txt'), delimiter=',', skiprows=1)
meta = json.loads('{"title": "Weights", "units": "a.u."}')
gen = np.genfromtxt(srcpath('gaps.csv'), delimiter=',', filling_values=np.nan)
fig, axes = plt.subplots(1, 3, figsize=(12, 4))
axes[0].hist(arr.ravel(), bins=40)
axes[0].set_title(meta['title'])
axes[1].plot(tbl[:, 0], tbl[:, 1:])
axes[2].imshow(np.nan_to_num(gen), cmap='cividis')
axes[2].set_xlabel(meta.get('units', ''))
plt.savefig(OUT)

import numpy as np
import matplotlib.pyplot as plt
from matplotlib import cm, colors
from mpl_toolkits.axes_grid1 import make_axes_locatable

rng = np.random.default_rng(42)
data = rng.normal(size=(20, 30)).cumsum(axis=1)
norm = colors.TwoSlopeNorm(vmin=data.min(), vcenter=0.0, vmax=data.max())
fig, ax = plt.subplots(figsize=(9, 6))
im = ax.imshow(data, cmap=cm.RdBu_r, norm=norm, aspect='auto')
divider = make_axes_locatable(ax)
cax = divider.append_axes("right", size="5%", pad=0.05)
fig.colorbar(im, cax=cax)
ax.set_xticks(range(0, 30, 5))
ax.set_yticks(range(0, 20, 4))
ax.set_title("Cumulative noise")
fig.savefig(OUT, dpi=120, bbox_inches='tight')

import numpy as np
import matplotlib.pyplot as plt

funcs = {'sin': np.sin, 'cos': np.cos, 'tanh': np.tanh, 'sinc': np.sinc}
x = np.linspace(-3, 3, 200)
fig, axes = plt.subplots(2, 2, figsize=(8, 8), sharex=True)
for ax, (name, fn) in zip(axes.flat, funcs.items()):
    y = fn(x)
    ax.plot(x, y)
    ax.set_title(name)
    ax.fill_between(x, y, 0, where=y > 0, alpha=0.3)
    ymin, ymax = min(y), max(y)
    ax.text(0.05, 0.9, f"range [{ymin:+.2f}, {ymax:+.2f}]", transform=ax.transAxes)
fig.tight_layout()
fig.savefig(OUT, dpi=150, bbox_inches='tight')

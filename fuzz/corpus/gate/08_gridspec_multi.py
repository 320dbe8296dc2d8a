import numpy as np
import matplotlib.pyplot as plt
from matplotlib import gridspec, patches, ticker

fig = plt.figure(figsize=(10, 7))
gs = gridspec.GridSpec(2, 3, figure=fig, hspace=0.35, wspace=0.3)
ax_main = fig.add_subplot(gs[0, :])
ax_a = fig.add_subplot(gs[1, 0])
ax_b = fig.add_subplot(gs[1, 1])
ax_c = fig.add_subplot(gs[1, 2])

t = np.linspace(0, 1, 500)
ax_main.plot(t, np.sin(2 * np.pi * 5 * t))
ax_main.add_patch(patches.Rectangle((0.2, -0.5), 0.2, 1.0, alpha=0.2, color='orange'))
ax_main.xaxis.set_major_locator(ticker.MultipleLocator(0.1))
ax_main.yaxis.set_major_formatter(ticker.StrMethodFormatter('{x:,.1f}'))
ax_a.hist(np.random.randn(1000), bins=30)
ax_b.boxplot([np.random.randn(50) + i for i in range(4)])
ax_c.pie([30, 45, 25], labels=['A', 'B', 'C'], autopct='%1.0f%%')
ax_c.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, pos: f"{v:.0%}"))
fig.suptitle('Overview')
fig.savefig(OUT, bbox_inches='tight')

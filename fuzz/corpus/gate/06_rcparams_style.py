import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
import numpy as np

plt.style.use('ggplot')
plt.rcParams['font.size'] = 12
plt.rcParams['axes.titleweight'] = 'bold'
plt.rcParams.update({'figure.figsize': (8, 5), 'axes.grid': True})
matplotlib.rcParams['lines.linewidth'] = 1.5

x = np.arange(1, 11)
fig, ax = plt.subplots()
ax.plot(x, x ** 2, marker='o')
ax.set_yscale('log')
ax.set_title('Squares')
plt.savefig(OUT)

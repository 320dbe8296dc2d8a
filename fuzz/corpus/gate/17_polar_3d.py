import numpy as np
import matplotlib.pyplot as plt
from mpl_toolkits.mplot3d import Axes3D  # noqa: F401

theta = np.linspace(0, 2 * np.pi, 100)
r = 1 + 0.3 * np.sin(5 * theta)
fig = plt.figure(figsize=(11, 5))
ax1 = fig.add_subplot(1, 2, 1, projection='polar')
ax1.plot(theta, r)
ax2 = fig.add_subplot(1, 2, 2, projection='3d')
X, Y = np.meshgrid(np.linspace(-2, 2, 40), np.linspace(-2, 2, 40))
Z = np.exp(-(X ** 2 + Y ** 2))
ax2.plot_surface(X, Y, Z, cmap='coolwarm', linewidth=0)
ax2.set_zlim(0, 1)
fig.savefig(OUT, dpi=110)

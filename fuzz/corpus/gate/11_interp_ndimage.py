import numpy as np
import matplotlib.pyplot as plt
from scipy import interpolate, ndimage

x = np.linspace(0, 10, 12)
y = np.cos(-x ** 2 / 9.0)
f_lin = interpolate.interp1d(x, y)
f_cub = interpolate.CubicSpline(x, y)
xnew = np.linspace(0, 10, 300)

img = np.zeros((64, 64))
img[20:44, 20:44] = 1.0
blurred = ndimage.gaussian_filter(img, sigma=3)
edges = ndimage.sobel(blurred)

fig, axes = plt.subplots(1, 3, figsize=(13, 4))
axes[0].plot(x, y, 'o', xnew, f_lin(xnew), '-', xnew, f_cub(xnew), '--')
axes[0].legend(['data', 'linear', 'cubic'], loc='best')
axes[1].imshow(blurred, cmap='gray')
axes[2].imshow(np.abs(edges), cmap='magma')
for ax in axes[1:]:
    ax.axis('off')
plt.savefig(OUT, dpi=100)

y, x = np.mgrid[-3:3:120j, -3:3:120j]
z = np.exp(-(x ** 2 + y ** 2)) * np.cos(3 * x)
fig, ax = plt.subplots(figsize=(4, 4))
ax.imshow(z, cmap='RdBu_r', interpolation='bilinear', extent=(-3, 3, -3, 3))
ax.set_title('bilinear at 150 dpi')
plt.savefig(OUT, dpi=150)

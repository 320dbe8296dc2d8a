np.random.seed(0)
fig, axs = plt.subplots(1, 3, figsize=(9, 3), constrained_layout=True)
for ax, cmap in zip(axs, ['viridis', 'plasma', 'cividis']):
    im = ax.imshow(np.random.rand(10, 10), cmap=cmap)
    fig.colorbar(im, ax=ax, orientation='horizontal', shrink=0.8, extend='both')
plt.savefig(OUT)

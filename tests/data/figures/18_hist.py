rng = np.random.default_rng(0)
fig, axs = plt.subplots(4, 4, figsize=(8, 8))
for i, ax in enumerate(axs.flat):
    ax.hist(rng.normal(i, 1 + i / 8, 500), bins=20, color='C%d' % (i % 10), alpha=0.8)
    ax.set_title(f'h{i}', fontsize=8)
fig.tight_layout()
plt.savefig(OUT)

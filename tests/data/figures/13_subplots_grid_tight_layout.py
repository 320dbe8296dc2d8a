x = np.linspace(0, 2 * np.pi, 100)
fig, axs = plt.subplots(3, 3, figsize=(7, 7), sharex=True)
for i, ax in enumerate(axs.flat):
    ax.plot(x, np.sin((i + 1) * x))
    ax.set_title(f'sin({i + 1}x)', fontsize=9)
plt.tight_layout()
plt.savefig(OUT)

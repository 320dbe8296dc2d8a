np.random.seed(0)
fig, axs = plt.subplots(2, 2, layout='constrained', figsize=(6, 5))
for i, ax in enumerate(axs.flat):
    ax.plot(np.random.randn(50).cumsum())
    ax.set_title(f'panel {i}')
    ax.set_xlabel('step')
fig.suptitle('constrained layout')
fig.savefig(OUT)

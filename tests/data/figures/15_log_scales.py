x = np.logspace(-2, 3, 60)
fig, axs = plt.subplots(1, 3, figsize=(9, 3))
axs[0].loglog(x, x ** 1.5)
axs[1].semilogy(x, np.exp(x / 200))
axs[2].semilogx(x, np.log(x))
axs[2].set_xscale('symlog')
for ax in axs:
    ax.grid(True, which='both', alpha=0.3)
fig.savefig(OUT, dpi=90)

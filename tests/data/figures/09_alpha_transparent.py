np.random.seed(0)
fig, ax = plt.subplots()
for k in range(5):
    ax.fill_between(np.arange(20), k, k + np.random.rand(20) * 3, alpha=0.3)
ax.scatter(np.random.rand(100) * 20, np.random.rand(100) * 8, alpha=0.5, c='k', s=8)
ax.set_title('alpha and transparent background')
plt.savefig(OUT, transparent=True)

# mistake: matplotlib.cm.get_cmap, removed in matplotlib 3.9
# expect: plt.get_cmap
# fix: plt.cm.get_cmap('viridis') => plt.get_cmap('viridis')
cmap = plt.cm.get_cmap('viridis')
for i in range(5):
    plt.plot(np.arange(10) * i, color=cmap(i / 4))
plt.savefig(OUT)

from matplotlib import cm
np.random.seed(0)
fig, ax = plt.subplots()
ax.scatter(np.random.rand(50), np.random.rand(50), c=np.random.rand(50), cmap=cm.viridis)
ax.set_title('vector first')
plt.savefig(OUT[:-4] + '_a.svg')
plt.savefig(OUT[:-4] + '_b.pdf', bbox_inches='tight')
plt.savefig(OUT)

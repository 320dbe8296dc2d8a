# mistake: the figure closed before it was saved, so nothing comes back
# expect: was not written
# expect: plt.savefig(OUT)
# fix: plt.close() => plt.savefig(OUT)
x = np.linspace(-3, 3, 100)
plt.plot(x, np.exp(-x ** 2))
plt.close()

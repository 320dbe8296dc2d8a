# mistake: plt.show() instead of saving
# expect: show()
# expect: plt.savefig(OUT)
# fix: plt.show() => plt.savefig(OUT)
x = np.linspace(-3, 3, 100)
plt.plot(x, np.exp(-x ** 2))
plt.show()

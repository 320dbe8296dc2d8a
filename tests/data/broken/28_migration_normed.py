# mistake: hist(normed=), removed in matplotlib 3.1
# expect: density=True
# forbid: Rectangle.set()
# fix: normed=True => density=True
plt.hist(np.random.randn(300), bins=20, normed=True)
plt.savefig(OUT)

# mistake: size= instead of s= in scatter
# expect: plt.scatter() got an unexpected keyword argument 'size'
# expect: 's'
# fix: size=12 => s=12
x, y = np.random.rand(2, 40)
plt.scatter(x, y, size=12)
plt.savefig(OUT)

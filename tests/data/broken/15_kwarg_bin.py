# mistake: bin= instead of bins= for a histogram
# expect: plt.hist() got an unexpected keyword argument 'bin'
# expect: Did you mean: 'bins'?
# forbid: Rectangle.set()
# fix: bin=30 => bins=30
data = np.random.normal(size=500)
plt.hist(data, bin=30)
plt.savefig(OUT)

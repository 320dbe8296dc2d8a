# mistake: a dense pairwise matrix far too large for memory
# expect: Unable to allocate
# expect: (200000, 200000)
# expect: line 8
# fix: n = 200000 => n = 2000
n = 200000
x = np.random.rand(n)
d = np.abs(x[:, None] - x[None, :])
plt.imshow(d[:100, :100])
plt.savefig(OUT)

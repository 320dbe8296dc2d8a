# mistake: np.float, removed in numpy 1.24
# expect: float
# fix: dtype=np.float => dtype=float
values = np.array([1, 2, 3], dtype=np.float)
plt.plot(values / 2)
plt.savefig(OUT)

np.random.seed(0)
x = np.arange(10)
y = np.sqrt(x) + np.random.rand(10) * 0.2
fig, ax = plt.subplots()
ax.errorbar(x, y, yerr=0.1 + 0.05 * x, xerr=0.2, fmt='o', capsize=3, ecolor='gray')
ax.errorbar(x, y + 1, yerr=[0.1 * np.ones(10), 0.3 * np.ones(10)], fmt='s--', uplims=True)
ax.set_title('errorbars')
plt.savefig(OUT)

# mistake: np.trapz, removed in numpy 2.4 (np.trapezoid since 2.0)
# expect: np.trapezoid
# fix: np.trapz( => np.trapezoid(
x = np.linspace(0, 1, 50)
print(np.trapz(x ** 2, x))
plt.plot(x, x ** 2)
plt.savefig(OUT)

# mistake: a misspelt numpy function
# expect: Did you mean: 'linspace'?
# fix: np.linspase( => np.linspace(
x = np.linspase(0, 2 * np.pi, 200)
plt.plot(x, np.cos(x))
plt.savefig(OUT)

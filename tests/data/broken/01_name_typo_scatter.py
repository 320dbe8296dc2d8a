# mistake: a misspelt pyplot function
# expect: Did you mean: 'scatter'?
# expect: line 6
# fix: plt.scater( => plt.scatter(
x = np.linspace(0, 10, 50)
plt.scater(x, np.sin(x))
plt.savefig(OUT)

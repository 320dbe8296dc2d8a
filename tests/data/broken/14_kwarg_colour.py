# mistake: British spelling of a keyword argument
# expect: plt.plot() got an unexpected keyword argument 'colour'
# expect: Did you mean: 'color'?
# forbid: Line2D.set()
# fix: colour= => color=
x = np.arange(10)
plt.plot(x, x ** 2, colour='red')
plt.savefig(OUT)

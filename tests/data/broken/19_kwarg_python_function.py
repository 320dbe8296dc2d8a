# mistake: an invented keyword on a numpy function
# expect: np.linspace() got an unexpected keyword argument 'num_points'
# expect: Did you mean: 'num'?
# fix: num_points=100 => num=100
x = np.linspace(0, 1, num_points=100)
plt.plot(x, x ** 3)
plt.savefig(OUT)

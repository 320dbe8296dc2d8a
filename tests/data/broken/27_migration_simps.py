# mistake: scipy.integrate.simps, removed in scipy 1.14
# expect: simpson
# fix: integrate.simps( => integrate.simpson(
from scipy import integrate
x = np.linspace(0, np.pi, 101)
area = integrate.simps(np.sin(x), x=x)
plt.title(f'area {area:.3f}')
plt.plot(x, np.sin(x))
plt.savefig(OUT)

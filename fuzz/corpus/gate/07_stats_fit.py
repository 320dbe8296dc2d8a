import numpy as np
import matplotlib.pyplot as plt
from scipy import stats, optimize

rng = np.random.default_rng(1)
x = np.linspace(0, 10, 60)
y = 2.5 * np.exp(-0.4 * x) + rng.normal(scale=0.05, size=x.size)


def model(t, a, k):
    return a * np.exp(-k * t)


popt, pcov = optimize.curve_fit(model, x, y, p0=(1.0, 0.1))
perr = np.sqrt(np.diag(pcov))
res = stats.linregress(x, np.log(np.clip(y, 1e-6, None)))
print(f"a={popt[0]:.3f}±{perr[0]:.3f}, k={popt[1]:.3f}±{perr[1]:.3f}, r={res.rvalue:.3f}")

fig, ax = plt.subplots()
ax.scatter(x, y, s=12, label='data')
ax.plot(x, model(x, *popt), 'r-', label='fit: a=%.2f, k=%.2f' % tuple(popt))
ax.legend()
fig.savefig(OUT, dpi=150)

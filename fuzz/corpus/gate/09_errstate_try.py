import numpy as np
import matplotlib.pyplot as plt
import warnings

warnings.filterwarnings('ignore', category=RuntimeWarning)

values = np.array([1.0, 0.0, 2.0, -1.0, 4.0])
with np.errstate(divide='ignore', invalid='ignore'):
    ratio = np.where(values != 0, 1.0 / values, np.nan)
    logs = np.log(values)

try:
    bad = float("not a number")
except ValueError as e:
    print("conversion failed:", e)
    bad = np.nan

fig, ax = plt.subplots()
ax.plot(ratio, 'o-', label='1/x')
ax.plot(logs, 's--', label='log x')
ax.legend()
ax.set_title('Safe division, bad={}'.format(bad))
plt.savefig(OUT)

import numpy as np
x = np.linspace(0, 10, 200)
fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(x, np.sin(x), label='sin')
ax.plot(x, np.cos(x), label='cos')
ax.scatter(x[::10], np.sin(x[::10]) + 0.1, s=12, label='samples')
ax.set_xlabel('t'); ax.set_ylabel('value'); ax.set_title('typical figure')
ax.legend()
plt.savefig(OUT)

import numpy as np
import matplotlib.pyplot as plt

x = np.linspace(0, 2 * np.pi, 200)
y = np.sin(x)
fig, ax = plt.subplots(figsize=(8, 4))
ax.plot(x, y, label="sin(x)", color="tab:blue", lw=2)
ax.plot(x, np.cos(x), "--", label="cos(x)")
ax.set_xlabel("x [rad]")
ax.set_ylabel("amplitude")
ax.set_title(f"Trig functions, n={len(x)}")
ax.legend(loc="upper right")
ax.grid(True, alpha=0.3)
fig.savefig(OUT, dpi=150, bbox_inches="tight")

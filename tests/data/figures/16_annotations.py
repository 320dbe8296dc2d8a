x = np.linspace(0, 5, 100)
y = np.cos(2 * np.pi * x) * np.exp(-x)
fig, ax = plt.subplots()
ax.plot(x, y)
ax.annotate('local max', xy=(1, np.exp(-1)), xytext=(2, 0.6),
            arrowprops=dict(facecolor='black', shrink=0.05))
ax.annotate('curved', xy=(2.5, -0.05), xytext=(3.5, -0.4),
            arrowprops=dict(arrowstyle='->', connectionstyle='arc3,rad=0.3'))
ax.annotate('axes fraction', xy=(0.05, 0.95), xycoords='axes fraction', va='top')
ax.set_ylim(-1, 1)
plt.savefig(OUT)

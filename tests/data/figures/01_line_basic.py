x = np.linspace(0, 10, 50)
plt.plot(x, np.sin(x))
plt.title('basic line')
plt.savefig(OUT)

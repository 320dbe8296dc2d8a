import matplotlib as mpl
plt.style.use('ggplot')
mpl.rcParams['lines.linewidth'] = 2.5
mpl.rcParams['savefig.dpi'] = 90
x = np.linspace(0, 1, 20)
fig, ax = plt.subplots()
ax.plot(x, x, x, x ** 2, x, x ** 0.5)
ax.set_title('ggplot style, rc savefig.dpi')
plt.savefig(OUT)

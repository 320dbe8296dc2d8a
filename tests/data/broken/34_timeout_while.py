# mistake: a loop whose condition never becomes false
# timeout: 3
# expect: inside the loop `while t < 1.0:` at line 7
# fix: t += dt * 0 => t += dt
t, dt = 0.0, 0.01
xs = []
while t < 1.0:
    xs.append(np.sin(t))
    t += dt * 0
plt.plot(xs)
plt.savefig(OUT)

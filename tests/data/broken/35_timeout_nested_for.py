# mistake: a pure-Python triple loop far too slow for the data size
# timeout: 3
# expect: inside the loop `for
# expect: stopped at line
# fix: n = 3000 => n = 30
n = 3000
grid = np.zeros((n, n))
for i in range(n):
    for j in range(n):
        for k in range(10):
            grid[i, j] += np.sin(i * j + k)
plt.imshow(grid)
plt.savefig(OUT)

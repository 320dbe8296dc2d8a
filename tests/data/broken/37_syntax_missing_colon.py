# mistake: a for statement without its colon
# expect: expected ':'
# expect: line 5
# fix: for i in range(3) => for i in range(3):
for i in range(3)
    plt.plot(np.arange(5) * i)
plt.savefig(OUT)

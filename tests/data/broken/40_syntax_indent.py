# mistake: a block whose body is not indented
# expect: expected an indented block after 'for' statement on line 5
# expect: line 6
# fix: \nplt.plot(np.arange(4) + i) => \n    plt.plot(np.arange(4) + i)
for i in range(3):
plt.plot(np.arange(4) + i)
plt.savefig(OUT)

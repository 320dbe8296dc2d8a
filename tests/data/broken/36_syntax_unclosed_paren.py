# mistake: a call whose closing parenthesis is missing
# expect: '(' was never closed
# expect: line 7
# forbid: unexpected token 'plt'
# fix: plt.plot(x, np.sin(x) => plt.plot(x, np.sin(x))
x = np.linspace(0, 1, 20)
plt.plot(x, np.sin(x)
plt.savefig(OUT)

# mistake: a list closed with a parenthesis
# expect: closing parenthesis ')' does not match opening parenthesis '['
# expect: line 5
# fix: [1, 4, 9) => [1, 4, 9])
plt.plot([1, 4, 9)
plt.savefig(OUT)

# mistake: a string literal without its closing quote
# expect: unterminated string literal
# expect: line 6
# fix: plt.title('Revenue) => plt.title('Revenue')
plt.plot([1, 2])
plt.title('Revenue)
plt.savefig(OUT)

# mistake: the old seaborn style name, renamed in matplotlib 3.6
# expect: 'seaborn-v0_8'
# fix: plt.style.use('seaborn') => plt.style.use('seaborn-v0_8')
plt.style.use('seaborn')
plt.plot([1, 3, 2])
plt.savefig(OUT)

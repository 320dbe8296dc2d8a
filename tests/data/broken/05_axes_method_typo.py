# mistake: a misspelt Axes method
# expect: Did you mean: 'set_xlabel'?
# fix: ax.set_xlable( => ax.set_xlabel(
fig, ax = plt.subplots()
ax.plot([1, 2, 3], [2, 4, 8])
ax.set_xlable('step')
fig.savefig(OUT)

# mistake: a new figure opened after drawing, so the saved one is empty
# expect: empty
# expect: another figure
# expect: fig.savefig(OUT)
# fix: plt.figure(figsize=(8, 4))\nplt.savefig(OUT) => plt.savefig(OUT)
fig = plt.figure()
plt.plot([1, 2, 3], [3, 1, 2])
plt.title('Trend')
plt.figure(figsize=(8, 4))
plt.savefig(OUT)

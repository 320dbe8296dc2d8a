labels = ['G1', 'G2', 'G3', 'G4', 'G5']
men = [20, 35, 30, 35, 27]
women = [25, 32, 34, 20, 25]
x = np.arange(len(labels))
fig, ax = plt.subplots()
b1 = ax.bar(x - 0.2, men, 0.4, label='Men')
b2 = ax.bar(x + 0.2, women, 0.4, label='Women', hatch='//')
ax.bar_label(b1, padding=3)
ax.bar_label(b2, padding=3)
ax.set_xticks(x, labels)
ax.legend()
plt.savefig(OUT)

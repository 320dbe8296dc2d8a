x = np.linspace(0, 3, 40)
fig, ax = plt.subplots(figsize=(6, 4))
for k in range(6):
    ax.plot(x, x ** (k / 2), label=f'power {k / 2:.1f}')
ax.legend(loc='best', ncol=2, title='curves', fancybox=True, shadow=True)
ax.legend(loc='upper left', bbox_to_anchor=(1.02, 1.0))
plt.savefig(OUT, bbox_inches='tight')

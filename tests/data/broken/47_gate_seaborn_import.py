# mistake: importing a plotting library that is not available
# expect: seaborn
# expect: matplotlib
# forbid: use another name
# fix: import seaborn as sns\nsns.set_theme() => plt.style.use('seaborn-v0_8')
import seaborn as sns
sns.set_theme()
plt.plot([1, 2, 3])
plt.savefig(OUT)

# mistake: a text property spelt with an underscore
# expect: 'font_weight'
# expect: Did you mean: 'fontweight'?
# expect: plt.title()
# fix: font_weight= => fontweight=
plt.plot([1, 2, 3])
plt.title('Growth', font_weight='bold')
plt.savefig(OUT)

import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
import matplotlib as mpl

mpl.rcParams['axes.spines.top'] = False
mpl.rcParams['axes.spines.right'] = False
df = pd.DataFrame({'group': list('ABCD'), 'mean': [3.1, 4.2, 2.8, 5.0], 'sem': [0.2, 0.3, 0.25, 0.4]})
df['lower'] = df['mean'] - 1.96 * df['sem']
df['upper'] = df['mean'] + 1.96 * df['sem']
df = df.set_index('group')
fig, (ax, tax) = plt.subplots(1, 2, figsize=(11, 4), gridspec_kw={'width_ratios': [2, 1]})
ax.errorbar(df.index, df['mean'], yerr=1.96 * df['sem'], fmt='o', capsize=5)
ax.set_ylim(0, None)
tax.axis('off')
cells = [[f"{v:.2f}" for v in row] for row in df[['mean', 'lower', 'upper']].to_numpy()]
tbl = tax.table(cellText=cells, rowLabels=list(df.index), colLabels=['mean', 'lo', 'hi'], loc='center')
tbl.scale(1, 1.5)
fig.savefig(OUT, bbox_inches='tight')

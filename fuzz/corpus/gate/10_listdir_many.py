import numpy as np
import pandas as pd
import matplotlib.pyplot as plt

files = sorted(f for f in listdir() if f.endswith('.csv'))
fig, ax = plt.subplots(figsize=(9, 5))
for i, name in enumerate(files):
    df = pd.read_csv(srcpath(name))
    label = name.rsplit('.', 1)[0]
    ax.plot(df.iloc[:, 0], df.iloc[:, 1], label=label, color=plt.cm.tab10(i % 10))
ax.legend(ncol=2, fontsize=8)
ax.set_xlabel('time')
print(f"plotted {len(files)} files")
for path in walkfiles():
    print(path)
fig.savefig(OUT, dpi=150, bbox_inches='tight')

import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

from pathlib import Path
files = sorted(Path('/mnt/data').glob('*.csv'))
print([f.name for f in files])
frames = {f.stem: pd.read_csv(f) for f in files}
fig, axes = plt.subplots(1, len(frames), figsize=(10, 4))
for ax, (name, frame) in zip(axes, frames.items()):
    ax.hist(frame.select_dtypes('number').iloc[:, -1], bins=10)
    ax.set_title(name)
fig.savefig('inputs_overview.png')

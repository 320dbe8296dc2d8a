import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

from pathlib import Path
for entry in sorted(Path('/mnt/data').iterdir()):
    if entry.suffix == '.npy':
        arr = np.load(entry)
        plt.contourf(arr, levels=10)
        plt.title(entry.stem)
plt.savefig('from_iterdir.png')

import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

from matplotlib.cm import get_cmap
cmap = get_cmap('viridis')
plt.scatter([1, 2, 3], [3, 1, 2], c=[0.1, 0.5, 0.9], cmap=cmap)
plt.savefig('cmap.png')

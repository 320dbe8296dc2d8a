import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

values = np.loadtxt('/mnt/data/values.txt')
plt.plot(np.sort(values))
plt.savefig('sorted.png')
np.savetxt('sorted.txt', np.sort(values))

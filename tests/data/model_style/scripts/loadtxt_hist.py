import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

values = np.loadtxt('values.txt')
plt.hist(values, bins=20)
plt.savefig('values_hist.png')

import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

np.random.seed(42)
data = np.random.randn(500)
plt.hist(data, bins=30, alpha=0.7)
plt.axvline(data.mean(), color='r', linestyle='--')
plt.savefig('hist.png')

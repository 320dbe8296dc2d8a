import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

x = np.arange(5).astype(np.float)
plt.plot(x)
plt.savefig('float.png')

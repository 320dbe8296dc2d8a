import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

scan = np.load('scan.npy')
plt.imshow(scan, cmap='magma', aspect='auto')
plt.colorbar(label='value')
plt.savefig('scan.png')

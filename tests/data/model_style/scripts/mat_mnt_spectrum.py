import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

import scipy.io
m = scipy.io.loadmat('/mnt/data/data.mat')
s = m['signal'].ravel()
spec = np.abs(np.fft.rfft(s))
plt.semilogy(spec)
plt.title('Spectrum')
plt.savefig('spectrum.svg')

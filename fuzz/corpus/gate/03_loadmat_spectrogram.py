import numpy as np
import matplotlib.pyplot as plt
from scipy.io import loadmat
from scipy import signal

data = loadmat(srcpath('recording.mat'))
sig = np.squeeze(data['signal'])
fs = float(np.squeeze(data['fs']))
b, a = signal.butter(4, [1.0, 40.0], btype='bandpass', fs=fs)
filtered = signal.filtfilt(b, a, sig)
f, t, Sxx = signal.spectrogram(filtered, fs=fs, nperseg=256, noverlap=128)

fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 8), sharex=False)
ax1.plot(np.arange(len(filtered)) / fs, filtered, lw=0.5)
ax1.set_title('Filtered signal')
im = ax2.pcolormesh(t, f, 10 * np.log10(Sxx + 1e-12), shading='gouraud', cmap='viridis')
ax2.set_ylabel('Frequency [Hz]')
ax2.set_xlabel('Time [s]')
fig.colorbar(im, ax=ax2, label='dB')
plt.savefig(OUT, dpi=150, bbox_inches='tight')

import numpy as np
import matplotlib.pyplot as plt

fs = 500
t = np.arange(0, 2, 1 / fs)
signal = np.sin(2 * np.pi * 7 * t) + 0.5 * np.random.randn(t.size)
spectrum = np.abs(np.fft.rfft(signal)) / t.size
freqs = np.fft.rfftfreq(t.size, 1 / fs)
peak = freqs[np.argmax(spectrum[1:]) + 1]
codes = ['A', 'B', 'C']
for code in codes:
    print(code, len(code))
fig, (a1, a2) = plt.subplots(2, 1)
a1.plot(t, signal)
a2.semilogy(freqs, spectrum)
a2.axvline(peak, color='r')
a2.set_title('peak at %.1f Hz' % peak)
plt.tight_layout()
plt.savefig(OUT)

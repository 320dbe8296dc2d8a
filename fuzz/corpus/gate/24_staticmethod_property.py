import numpy as np
import matplotlib.pyplot as plt


class Histogram:
    def __init__(self, data, bins=20):
        self._data = np.asarray(data)
        self.bins = bins

    @property
    def n(self):
        return len(self._data)

    @staticmethod
    def normalise(a):
        return (a - a.mean()) / a.std()

    @classmethod
    def from_random(cls, n, seed=0):
        return cls(np.random.default_rng(seed).gamma(2.0, size=n))

    def __len__(self):
        return self.n

    def plot(self, ax):
        ax.hist(self.normalise(self._data), bins=self.bins, density=True)
        ax.set_title(f"n = {len(self)}")


h = Histogram.from_random(2000)
fig, ax = plt.subplots()
h.plot(ax)
print(isinstance(h, Histogram), type(h))
fig.savefig(OUT, dpi=150)

import numpy as np
import matplotlib.pyplot as plt


class BasePlotter:
    def __init__(self, title):
        self.title = title
        self._fig = None

    def __repr__(self):
        return f"{type(self).__name__}({self.title!r})"

    def figure(self):
        if self._fig is None:
            self._fig = plt.figure(figsize=(6, 4))
        return self._fig


class ScatterPlotter(BasePlotter):
    def __init__(self, title, n=100):
        super().__init__(title)
        self.n = n
        self._rng = np.random.default_rng(0)

    def _data(self):
        return self._rng.normal(size=(self.n, 2))

    def draw(self):
        fig = self.figure()
        ax = fig.add_subplot(111)
        pts = self._data()
        ax.scatter(pts[:, 0], pts[:, 1], s=10, alpha=0.7)
        ax.set_title(self.title)
        return fig


p = ScatterPlotter("Random points", n=250)
print(repr(p))
fig = p.draw()
fig.savefig(OUT)

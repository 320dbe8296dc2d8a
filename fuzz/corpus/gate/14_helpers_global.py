import numpy as np
import matplotlib.pyplot as plt

COUNTER = 0
COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c']


def next_color():
    global COUNTER
    c = COLORS[COUNTER % len(COLORS)]
    COUNTER += 1
    return c


def moving_average(a, n=5):
    ret = np.cumsum(a, dtype=float)
    ret[n:] = ret[n:] - ret[:-n]
    return ret[n - 1:] / n


def main():
    data = np.random.default_rng(7).normal(size=500).cumsum()
    fig, ax = plt.subplots()
    ax.plot(data, color=next_color(), alpha=0.4, label='raw')
    for w in (5, 25):
        ax.plot(np.arange(w - 1, len(data)), moving_average(data, w), color=next_color(), label=f'MA{w}')
    ax.legend()
    fig.savefig(OUT)


if __name__ == '__main__':
    main()

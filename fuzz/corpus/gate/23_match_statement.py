import numpy as np
import matplotlib.pyplot as plt


def style_for(kind):
    match kind:
        case 'line':
            return {'ls': '-'}
        case 'dash' | 'dashed':
            return {'ls': '--'}
        case {'ls': ls}:
            return {'ls': ls}
        case _:
            return {'ls': ':'}


x = np.linspace(0, 1, 50)
fig, ax = plt.subplots()
for i, kind in enumerate(['line', 'dash', {'ls': '-.'}, 'other']):
    ax.plot(x, x ** (i + 1), **style_for(kind), label=str(kind))
ax.legend()
plt.savefig(OUT)

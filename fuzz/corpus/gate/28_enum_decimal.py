from enum import Enum
from decimal import Decimal, ROUND_HALF_UP
from fractions import Fraction
import statistics
import matplotlib.pyplot as plt


class Color(Enum):
    RED = 'tab:red'
    GREEN = 'tab:green'


vals = [Decimal('1.25'), Decimal('2.35'), Decimal('3.45')]
rounded = [v.quantize(Decimal('0.1'), rounding=ROUND_HALF_UP) for v in vals]
mean = statistics.mean(float(v) for v in rounded)
frac = Fraction(3, 8)
fig, ax = plt.subplots()
ax.bar(range(len(rounded)), [float(v) for v in rounded], color=Color.RED.value)
ax.axhline(mean, color=Color.GREEN.value)
ax.set_title(f"mean {mean:.2f}, frac {float(frac):.3f}")
plt.savefig(OUT)

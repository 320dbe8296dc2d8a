import math
import numpy as np
import matplotlib.pyplot as plt


def primes(limit):
    for n in range(2, limit):
        if all(n % d for d in range(2, int(math.isqrt(n)) + 1)):
            yield n


ps = list(primes(500))
gaps = [b - a for a, b in zip(ps, ps[1:])]
if (big := max(gaps)) > 10:
    print("largest gap", big)
squares = {p: p * p for p in ps[:10]}
odd = {g for g in gaps if g % 2}
fig, ax = plt.subplots()
ax.stem(ps[1:], gaps)
ax.set_title(f"prime gaps below 500 (max {big}, odd gaps: {sorted(odd)})")
fig.savefig(OUT)

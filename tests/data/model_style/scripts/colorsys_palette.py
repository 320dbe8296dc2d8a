import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

import colorsys
colors = [colorsys.hsv_to_rgb(i / 6, 0.7, 0.9) for i in range(6)]
plt.bar(range(6), range(1, 7), color=colors)
plt.savefig('palette.png')

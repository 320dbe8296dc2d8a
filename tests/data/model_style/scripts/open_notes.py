import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

with open('notes.txt') as f:
    title = f.readline().strip()
plt.bar(['a', 'b'], [3, 5])
plt.title(title)
plt.savefig('notes_chart.png')

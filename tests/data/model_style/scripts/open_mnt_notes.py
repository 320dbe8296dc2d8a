import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

text = open('/mnt/data/notes.txt').read()
words = text.split()
plt.barh(range(len(words)), [len(w) for w in words])
plt.yticks(range(len(words)), words)
plt.tight_layout()
plt.savefig('words.png')

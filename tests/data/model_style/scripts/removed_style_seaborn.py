import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

plt.style.use('seaborn')
plt.plot([1, 2, 3])
plt.savefig('styled.png')

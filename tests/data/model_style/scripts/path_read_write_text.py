import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

from pathlib import Path
notes = Path('notes.txt').read_text()
title = notes.splitlines()[0]
plt.bar(['a', 'b', 'c'], [3, 5, 4])
plt.title(title)
plt.savefig(Path('notes_title.png'))
Path('/mnt/data/word_count.txt').write_text(f'{len(notes.split())} words\n')

import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

from pathlib import Path
def main():
    here = Path('.').resolve()
    df = pd.read_csv(here / 'sales.csv')
    plt.plot(df['sales'].rolling(3).mean())
    target = Path('rolling.png')
    plt.savefig(target)
    print('exists:', target.exists(), target.suffix)


if __name__ == '__main__':
    main()

import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

def main():
    import os
    path = os.path.join('/mnt/data', 'sales.csv')
    df = pd.read_csv(path)
    fig, ax = plt.subplots()
    ax.hist(df['sales'], bins=12, edgecolor='black')
    ax.set_title('Distribution of sales')
    plt.savefig('result.png')
    plt.show()


if __name__ == '__main__':
    main()

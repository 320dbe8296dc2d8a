import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

def main():
    df = pd.read_csv('sales.csv')
    ax = df.groupby('region')['sales'].sum().plot(kind='bar', figsize=(6, 4), rot=0)
    ax.set_ylabel('Sales')
    fig = ax.figure
    plt.tight_layout()
    with open('/mnt/data/report.txt', 'w') as f:
        f.write(df.head().to_string())
    plt.savefig('novice.png')


if __name__ == '__main__':
    main()

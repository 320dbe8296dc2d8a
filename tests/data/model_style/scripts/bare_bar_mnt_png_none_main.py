import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

def main():
    df = pd.read_csv('sales.csv')
    totals = df.groupby('month', sort=False)['sales'].sum()
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.bar(totals.index, totals.values, color='steelblue')
    ax.set_title('Total sales by month')
    ax.set_xlabel('Month')
    ax.set_ylabel('Sales')
    plt.savefig('/mnt/data/plot.png')


if __name__ == '__main__':
    main()

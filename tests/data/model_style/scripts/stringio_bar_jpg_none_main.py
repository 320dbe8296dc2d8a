import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

def main():
    from io import StringIO
    csv = '''month,region,sales,units
    Jan,North,120,10
    Feb,North,135,12
    Mar,North,150,9
    Jan,South,90,14
    Feb,South,110,11
    Mar,South,125,16
    '''
    df = pd.read_csv(StringIO(csv))
    totals = df.groupby('month', sort=False)['sales'].sum()
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.bar(totals.index, totals.values, color='steelblue')
    ax.set_title('Total sales by month')
    ax.set_xlabel('Month')
    ax.set_ylabel('Sales')
    plt.savefig('chart.jpg', dpi=80)


if __name__ == '__main__':
    main()

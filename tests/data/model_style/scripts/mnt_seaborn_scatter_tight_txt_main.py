import pandas as pd
import numpy as np
import matplotlib.pyplot as plt

def main():
    df = pd.read_csv('/mnt/data/sales.csv')
    import seaborn as sns
    fig, ax = plt.subplots()
    sns.scatterplot(data=df, x='units', y='sales', hue='region', ax=ax)
    with open('/mnt/data/report.txt', 'w') as f:
        f.write(df.head().to_string())
    plt.tight_layout()
    plt.savefig('output.png', dpi=100)
    plt.close()


if __name__ == '__main__':
    main()

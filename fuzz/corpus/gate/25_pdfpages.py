import numpy as np
import matplotlib.pyplot as plt
from matplotlib.backends.backend_pdf import PdfPages

with PdfPages(OUT) as pdf:
    for k in range(3):
        fig, ax = plt.subplots()
        ax.plot(np.arange(10) ** k)
        ax.set_title('power {}'.format(k))
        pdf.savefig(fig)
        plt.close(fig)

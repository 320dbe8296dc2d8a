"""Regenerates the sample inputs shipped in examples/data (deterministic)."""
import os

import numpy as np
from scipy.io import savemat

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data')
os.makedirs(here, exist_ok=True)
rng = np.random.default_rng(7)

regions = ['north', 'south', 'east', 'west']
products = ['widgets', 'gears', 'springs']
with open(os.path.join(here, 'sales.csv'), 'w') as f:
    f.write('month,region,product,units,revenue\n')
    for month in range(1, 13):
        for region in regions:
            for product in products:
                units = int(rng.integers(20, 200))
                price = {'widgets': 4.5, 'gears': 12.0, 'springs': 1.25}[product]
                f.write(f'2026-{month:02d},{region},{product},{units},{units * price:.2f}\n')

y, x = np.mgrid[-1:1:96j, -1:1:128j]
scan = np.exp(-((x - 0.3) ** 2 + (y + 0.2) ** 2) * 6) + 0.6 * np.exp(-((x + 0.4) ** 2 + (y - 0.3) ** 2) * 10)
scan += 0.05 * rng.standard_normal(scan.shape)
savemat(os.path.join(here, 'scan.mat'), {'scan': scan.astype(np.float32), 'pixel_mm': np.float64(0.25)},
        do_compression=True)

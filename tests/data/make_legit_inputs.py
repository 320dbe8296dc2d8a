"""Regenerates tests/data/legit_inputs/: the input files the corpus scripts in
tests/data/legit/ read through srcpath(). Deterministic: same bytes on every run.

    .venv/bin/python tests/data/make_legit_inputs.py

Every CSV keeps two numeric columns first, because 10_listdir_many.py plots
column 0 against column 1 of every *.csv in the source directory.
"""
import os

import numpy as np
from scipy.io import savemat

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'legit_inputs')
os.makedirs(HERE, exist_ok=True)
rng = np.random.default_rng(20240601)


def write(name, text):
    with open(os.path.join(HERE, name), 'w', newline='\n') as f:
        f.write(text)


# data.csv (02_csv_groupby): date, category, value with some missing values.
lines = ['id,value,date,category']
categories = ['alpha', 'beta', 'gamma', 'delta', 'epsilon']
for i in range(60):
    cat = categories[i % len(categories)]
    value = '' if i % 11 == 7 else f'{rng.normal(10 + 2 * (i % 5), 1.5):.3f}'
    lines.append(f'{i},{value},2024-{1 + i // 28:02d}-{1 + i % 28:02d},{cat}')
write('data.csv', '\n'.join(lines) + '\n')

# sales.csv (12_pivot_heatmap): date parsed by pandas, revenue summed per year x month.
lines = ['units,revenue,date,region']
regions = ['north', 'south', 'east', 'west']
for year in (2023, 2024):
    for month in range(1, 13):
        for k, region in enumerate(regions):
            units = int(rng.integers(20, 200))
            lines.append(f'{units},{units * 7.5:.2f},{year}-{month:02d}-{5 + 6 * k:02d},{region}')
write('sales.csv', '\n'.join(lines) + '\n')

# measurements.csv (13_query_filter): hot and dry, freezing, six stations.
lines = ['time,temperature,humidity,pressure,station']
stations = ['S1', 'S2', 'S3', 'S4', 'S5', 'S6']
for t in range(20):
    for s, station in enumerate(stations[: 6 - (t % 2)]):
        temp = 15 + 25 * np.sin(t / 3 + s) + rng.normal(0, 2)
        hum = float(np.clip(0.6 - temp / 100 + rng.normal(0, 0.1), 0.05, 0.99))
        pres = 1013 + rng.normal(0, 5)
        lines.append(f'{t},{temp:.2f},{hum:.3f},{pres:.1f},{station}')
write('measurements.csv', '\n'.join(lines) + '\n')

# left.csv / right.csv (27_merge_melt): one-to-one on id; a, b left, c right.
ids = np.arange(1, 31)
lines = ['id,a,b'] + [f'{i},{rng.normal(5, 1):.3f},{rng.normal(8, 2):.3f}' for i in ids]
write('left.csv', '\n'.join(lines) + '\n')
lines = ['id,c'] + [f'{i},{rng.normal(3, 0.5):.3f}' for i in ids[::-1]]
write('right.csv', '\n'.join(lines) + '\n')

# table.txt (21_np_load_text): comma separated, one header row, x then 3 series.
x = np.linspace(0, 1, 40)
lines = ['x,y1,y2,y3'] + [f'{v:.4f},{v * v:.4f},{np.sqrt(v):.4f},{np.sin(3 * v):.4f}' for v in x]
write('table.txt', '\n'.join(lines) + '\n')

# gaps.csv (21_np_load_text): headerless numeric grid with empty cells (genfromtxt).
grid = rng.normal(size=(12, 16))
rows = []
for r in range(grid.shape[0]):
    cells = ['' if (r > 0 and (r * 7 + c * 3) % 13 == 0) else f'{grid[r, c]:.3f}' for c in range(grid.shape[1])]
    rows.append(','.join(cells))
write('gaps.csv', '\n'.join(rows) + '\n')

# weights.npy (21_np_load_text): a small float32 matrix.
np.save(os.path.join(HERE, 'weights.npy'), rng.normal(size=(32, 24)).astype(np.float32))

# recording.mat (03_loadmat_spectrogram): 1-D 'signal' and scalar 'fs' (> 80 Hz for a
# 1-40 Hz band-pass); long enough for nperseg=256.
fs = 200.0
t = np.arange(1200) / fs
sig = np.sin(2 * np.pi * 10 * t) + 0.5 * np.sin(2 * np.pi * (5 + 10 * t) * t) + 0.3 * rng.normal(size=t.size)
mat = os.path.join(HERE, 'recording.mat')
savemat(mat, {'signal': sig.astype(np.float32), 'fs': np.float64(fs)}, do_compression=True)
# savemat stamps the time into the 116-byte text header; pin it so reruns are identical.
with open(mat, 'r+b') as f:
    f.write(b'MATLAB 5.0 MAT-file, written by tests/data/make_legit_inputs.py'.ljust(116))

for name in sorted(os.listdir(HERE)):
    print(f'{name:18s} {os.path.getsize(os.path.join(HERE, name)):6d} bytes')

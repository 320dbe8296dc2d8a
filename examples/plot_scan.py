# A scan stored as a MATLAB file: an image with a colorbar and a profile line.
from scipy.io import loadmat

data = loadmat(srcpath('scan.mat'))
scan = data['scan']
mm = float(data['pixel_mm'].squeeze())
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.5))
extent = [0, scan.shape[1] * mm, 0, scan.shape[0] * mm]
im = ax1.imshow(scan, cmap='viridis', origin='lower', extent=extent)
fig.colorbar(im, ax=ax1, label='intensity')
ax1.set_title('scan')
row = scan[scan.shape[0] // 2]
ax2.plot(np.arange(row.size) * mm, row)
ax2.set_xlabel('x (mm)')
ax2.set_title('middle row profile')
fig.tight_layout()
fig.savefig(OUT)
print(f"scan {scan.shape[0]}x{scan.shape[1]}, peak {scan.max():.3f}")

"""Sensor dashboard: loads measurements, cleans them, fits trends and draws a
multi-panel summary figure."""
import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
from matplotlib import gridspec, ticker, colors
from scipy import signal, stats, optimize
from scipy.io import loadmat
from dataclasses import dataclass, field
from typing import Dict, List, Optional
import warnings

warnings.filterwarnings("ignore", category=RuntimeWarning)
plt.style.use("ggplot")
plt.rcParams["font.size"] = 10
plt.rcParams["axes.titlesize"] = 11
plt.rcParams.update({"figure.dpi": 100, "legend.frameon": False})

SAMPLE_RATE = 250.0
BANDS = {"delta": (1, 4), "theta": (4, 8), "alpha": (8, 13), "beta": (13, 30)}
PALETTE = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e"]


@dataclass
class Channel:
    name: str
    data: np.ndarray
    fs: float = SAMPLE_RATE
    meta: Dict[str, str] = field(default_factory=dict)

    def duration(self) -> float:
        return len(self.data) / self.fs

    def band_power(self, lo: float, hi: float) -> float:
        f, pxx = signal.welch(self.data, fs=self.fs, nperseg=min(512, len(self.data)))
        mask = (f >= lo) & (f < hi)
        return float(np.trapz(pxx[mask], f[mask])) if mask.any() else 0.0


class Cleaner:
    """Removes drift and line noise from raw channels."""

    def __init__(self, fs: float, notch: float = 50.0):
        self.fs = fs
        self.notch = notch
        self._b, self._a = signal.iirnotch(notch, 30.0, fs)
        self._hp = signal.butter(2, 0.5, btype="highpass", fs=fs, output="sos")

    def __repr__(self):
        return f"Cleaner(fs={self.fs:.0f}, notch={self.notch:.0f})"

    def apply(self, x: np.ndarray) -> np.ndarray:
        y = signal.sosfiltfilt(self._hp, x)
        y = signal.filtfilt(self._b, self._a, y)
        return y - np.median(y)


def load_channels(name: str) -> List[Channel]:
    raw = loadmat(srcpath(name))
    out = []
    for key in sorted(k for k in raw.keys() if not k.startswith("__")):
        arr = np.asarray(raw[key]).squeeze()
        if arr.ndim != 1 or arr.size < 100:
            continue
        out.append(Channel(key, arr.astype(float)))
    return out


def load_events(name: str) -> pd.DataFrame:
    try:
        df = pd.read_csv(srcpath(name), parse_dates=["time"])
    except (FileNotFoundError, ValueError) as e:
        print("no events:", e)
        return pd.DataFrame(columns=["time", "kind", "score"])
    df = df.dropna(subset=["kind"])
    df["score"] = pd.to_numeric(df["score"], errors="coerce").fillna(0.0)
    return df


def exp_decay(t, a, k, c):
    return a * np.exp(-k * t) + c


def fit_trend(t: np.ndarray, y: np.ndarray) -> Optional[np.ndarray]:
    try:
        popt, _ = optimize.curve_fit(exp_decay, t, y, p0=(y[0] - y[-1], 0.1, y[-1]), maxfev=5000)
    except RuntimeError:
        return None
    return popt


def summarize(channels: List[Channel]) -> pd.DataFrame:
    rows = []
    for ch in channels:
        row = {"channel": ch.name, "seconds": round(ch.duration(), 1)}
        for band, (lo, hi) in BANDS.items():
            row[band] = ch.band_power(lo, hi)
        rows.append(row)
    df = pd.DataFrame(rows).set_index("channel")
    total = df[list(BANDS)].sum(axis=1)
    for band in BANDS:
        df[band + "_rel"] = df[band] / total
    return df


channels = load_channels("session.mat")
if not channels:
    rng = np.random.default_rng(0)
    t = np.arange(0, 20, 1 / SAMPLE_RATE)
    channels = [
        Channel(f"ch{i}", np.sin(2 * np.pi * (8 + i) * t) + 0.3 * rng.standard_normal(t.size))
        for i in range(4)
    ]

cleaner = Cleaner(SAMPLE_RATE)
print(repr(cleaner))
for ch in channels:
    ch.data = cleaner.apply(ch.data)

events = load_events("events.csv")
summary = summarize(channels)
print(summary.round(3).to_string())

strong = events.query("score > 0.5")
by_kind = events.groupby("kind")["score"].agg(["count", "mean", "max"])
print("{} events, {} strong".format(len(events), len(strong)))

fig = plt.figure(figsize=(14, 10))
gs = gridspec.GridSpec(3, 3, figure=fig, height_ratios=[1.2, 1, 1], hspace=0.45, wspace=0.3)

ax_raw = fig.add_subplot(gs[0, :])
offset = 0.0
for i, ch in enumerate(channels):
    tt = np.arange(ch.data.size) / ch.fs
    ax_raw.plot(tt, ch.data + offset, lw=0.4, color=PALETTE[i % len(PALETTE)], label=ch.name)
    offset += 4 * np.std(ch.data)
for _, ev in strong.iterrows():
    ax_raw.axvline(ev["time"].second, color="k", alpha=0.1)
ax_raw.set_xlabel("time [s]")
ax_raw.set_yticks([])
ax_raw.legend(loc="upper right", ncol=len(channels), fontsize=8)
ax_raw.set_title("Cleaned channels")

ax_psd = fig.add_subplot(gs[1, 0])
for i, ch in enumerate(channels):
    f, pxx = signal.welch(ch.data, fs=ch.fs, nperseg=1024)
    ax_psd.semilogy(f, pxx, color=PALETTE[i % len(PALETTE)], lw=1)
for band, (lo, hi) in BANDS.items():
    ax_psd.axvspan(lo, hi, alpha=0.08)
    ax_psd.text((lo + hi) / 2, ax_psd.get_ylim()[1], band, ha="center", va="top", fontsize=7)
ax_psd.set_xlim(0, 40)
ax_psd.set_xlabel("frequency [Hz]")
ax_psd.set_title("Power spectra")

ax_rel = fig.add_subplot(gs[1, 1])
rel = summary[[b + "_rel" for b in BANDS]]
bottom = np.zeros(len(rel))
for j, band in enumerate(BANDS):
    vals = rel[band + "_rel"].to_numpy()
    ax_rel.bar(rel.index, vals, bottom=bottom, label=band, color=PALETTE[j])
    bottom += vals
ax_rel.yaxis.set_major_formatter(ticker.PercentFormatter(1.0))
ax_rel.legend(fontsize=7, ncol=2)
ax_rel.set_title("Relative band power")

ax_corr = fig.add_subplot(gs[1, 2])
mat = np.corrcoef(np.vstack([ch.data[: min(c.data.size for c in channels)] for ch in channels]))
norm = colors.Normalize(vmin=-1, vmax=1)
im = ax_corr.imshow(mat, cmap="coolwarm", norm=norm)
ax_corr.set_xticks(range(len(channels)))
ax_corr.set_xticklabels([c.name for c in channels], rotation=45)
ax_corr.set_yticks(range(len(channels)))
ax_corr.set_yticklabels([c.name for c in channels])
for (r, c), v in np.ndenumerate(mat):
    ax_corr.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=7)
fig.colorbar(im, ax=ax_corr, fraction=0.046)
ax_corr.set_title("Correlation")

ax_fit = fig.add_subplot(gs[2, 0:2])
env = np.abs(signal.hilbert(channels[0].data))
win = int(SAMPLE_RATE)
smooth = np.convolve(env, np.ones(win) / win, mode="valid")
tt = np.arange(smooth.size) / SAMPLE_RATE
ax_fit.plot(tt, smooth, color="gray", lw=1, label="envelope")
popt = fit_trend(tt[::10], smooth[::10])
if popt is not None:
    a, k, c = popt
    ax_fit.plot(tt, exp_decay(tt, *popt), "r--", label=f"fit: {a:.2f}·exp(-{k:.3f}t)+{c:.2f}")
slope, intercept, r_value, p_value, _ = stats.linregress(tt, smooth)
ax_fit.plot(tt, intercept + slope * tt, "b:", label=f"linear r={r_value:.2f}, p={p_value:.1e}")
ax_fit.legend(fontsize=8)
ax_fit.set_title("Envelope trend")

ax_ev = fig.add_subplot(gs[2, 2])
if len(by_kind):
    ax_ev.barh(by_kind.index.astype(str), by_kind["count"], color="teal")
    for y, (cnt, mean) in enumerate(zip(by_kind["count"], by_kind["mean"])):
        ax_ev.text(cnt, y, f" {mean:.2f}", va="center", fontsize=7)
else:
    ax_ev.text(0.5, 0.5, "no events", ha="center", va="center", transform=ax_ev.transAxes)
ax_ev.set_title("Events by kind")

fig.suptitle("Session summary: {n} channels, {s:.0f} s".format(n=len(channels), s=channels[0].duration()))
fig.savefig(OUT, dpi=150, bbox_inches="tight")
plt.close(fig)

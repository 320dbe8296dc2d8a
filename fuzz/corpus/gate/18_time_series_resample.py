import pandas as pd
import numpy as np
import matplotlib.pyplot as plt
import matplotlib.dates as mdates
from datetime import datetime, timedelta

start = datetime(2024, 1, 1)
idx = pd.date_range(start, periods=24 * 60, freq='h')
ts = pd.Series(np.random.default_rng(3).normal(size=len(idx)).cumsum(), index=idx)
daily = ts.resample('D').agg(['mean', 'min', 'max'])
rolling = ts.rolling(window=24 * 7, min_periods=1).mean()
fig, ax = plt.subplots(figsize=(12, 4))
ax.fill_between(daily.index, daily['min'], daily['max'], alpha=0.3, label='daily range')
ax.plot(rolling.index, rolling.values, color='k', lw=1, label='7-day mean')
ax.xaxis.set_major_formatter(mdates.DateFormatter('%b %d'))
ax.set_xlim(start, start + timedelta(days=60))
ax.legend()
fig.autofmt_xdate()
fig.savefig(OUT, bbox_inches='tight')

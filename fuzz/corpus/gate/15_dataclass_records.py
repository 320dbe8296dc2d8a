from dataclasses import dataclass, field
from typing import List, Optional
import numpy as np
import matplotlib.pyplot as plt


@dataclass
class Series:
    name: str
    values: List[float] = field(default_factory=list)
    color: Optional[str] = None

    def mean(self) -> float:
        return float(np.mean(self.values)) if self.values else 0.0


series = [Series('alpha', [1, 2, 3, 4], 'red'), Series('beta', [2, 2.5, 2.7, 3.9]), Series('gamma', [])]
series = [s for s in series if s.values]
fig, ax = plt.subplots()
for s in sorted(series, key=lambda s: s.mean(), reverse=True):
    ax.plot(s.values, label=f"{s.name} (mean {s.mean():.2f})", color=s.color)
ax.legend()
fig.savefig(OUT, dpi=150, bbox_inches='tight')

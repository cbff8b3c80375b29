"""An interval for the speedup, from the paired blocks of the ABAB protocol.

Each round of the protocol times a float32 block and, right after it, an autocast block; their
ratio (float32 ÷ autocast, a speedup) is one paired observation, and slow drift of the machine
hits both halves of a pair alike. The interval is the distribution-free order-statistic
interval of the median of those ratios: with n ratios sorted, [x(j), x(n+1-j)] covers the true
median with probability 1 − 2·P(Binomial(n, ½) < j), whatever the ratios' distribution. It is
deterministic (no bootstrap seed to pick) and exact; see docs/measurement.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: The interval's nominal coverage; with fewer than MIN_PAIRS_95 pairs it is lower (reported).
LEVEL = 0.95
#: The fewest pairs whose [min, max] already covers the median with ≥ 95%: 1 − 2·0.5⁶ ≈ 0.969.
MIN_PAIRS_95 = 6


@dataclass(frozen=True)
class SpeedupInterval:
    """`level` interval of the median paired speedup (float32 ÷ autocast); `pairs` ratios.

    `median` is that median itself, the run's speedup figure: it always lies inside the
    interval (the ratio of the two modes' medians need not). None in files written before it.
    """

    low: float
    high: float
    level: float
    pairs: int
    median: float | None = None

    @property
    def width(self) -> float:
        """high ÷ low: 1.0 is a point, 1.25 spans a quarter."""
        return self.high / self.low if self.low > 0 else math.inf

    @property
    def half_width(self) -> float:
        """Relative half-width, symmetric in log space: √(high/low) − 1 (0.05 is ±5%)."""
        return math.sqrt(self.width) - 1

    def text(self) -> str:
        """'95%: 1.66–1.79' (the level as measured: fewer pairs give a lower one); bounds below
        0.1 keep two significant digits ('0.0024–0.0026', never '0.00–0.00')."""
        return f"{self.level:.0%}: {ratio_text(self.low)}–{ratio_text(self.high)}"

    def slower_text(self) -> str:
        """The same interval as slowdown factors (1 ÷ speedup): '95%: 1.35–1.46'."""
        low = 1 / self.high if self.high > 0 else math.inf
        high = 1 / self.low if self.low > 0 else math.inf
        return f"{self.level:.0%}: {ratio_text(low)}–{ratio_text(high)}"

    def to_dict(self) -> dict[str, Any]:
        data = {"low": self.low, "high": self.high, "level": self.level, "pairs": self.pairs}
        if self.median is not None:
            data["median"] = self.median
        return data


def paired_ratios(plain_ms: Sequence[float], autocast_ms: Sequence[float]) -> list[float]:
    """float32 ÷ autocast for each pair of neighbouring blocks (pairs with a zero are skipped)."""
    return [p / a for p, a in zip(plain_ms, autocast_ms, strict=True) if p > 0 and a > 0]


def _order_statistic_rank(n: int, level: float) -> tuple[int, float]:
    """The largest j (1-based) with coverage of [x(j), x(n+1−j)] ≥ level, and that coverage.

    j = 1 ([min, max]) when even that covers less than `level`: its coverage is then returned.
    """
    # tail = P(B ≤ j − 1) for B ~ Binomial(n, ½), term by term in log space (n may be large).
    log_pmf = -n * math.log(2)  # log P(B = 0)
    tail = math.exp(log_pmf)
    j = 1
    while j + 1 <= (n + 1) // 2:
        log_pmf += math.log(n - (j - 1)) - math.log(j)  # log P(B = j)
        wider = tail + math.exp(log_pmf)
        if 1 - 2 * wider < level:
            break
        j, tail = j + 1, wider
    return j, 1 - 2 * tail


def median_interval(
    ratios: Sequence[float], level: float = LEVEL, presorted: bool = False
) -> SpeedupInterval | None:
    """The order-statistic interval of the median of `ratios`; None for fewer than 2.

    With fewer than MIN_PAIRS_95 ratios [min, max] covers less than 95%: the interval is
    [min, max] and `level` says what it does cover (5 pairs: 94%, 3 pairs: 75%).
    """
    # `presorted`: finite, positive and in order already (a timing loop keeps them so).
    values = ratios if presorted else sorted(r for r in ratios if math.isfinite(r) and r > 0)
    n = len(values)
    if n < 2:
        return None
    j, coverage = _order_statistic_rank(n, level)
    level = min(level, coverage)  # below MIN_PAIRS_95 pairs even [min, max] covers less
    middle = n // 2
    median = values[middle] if n % 2 else (values[middle - 1] + values[middle]) / 2
    return SpeedupInterval(
        low=values[j - 1], high=values[n - j], level=level, pairs=n, median=median
    )


def ratio_text(value: float) -> str:
    """Two decimals, or two significant digits below 0.1 (a ratio of 0.0025 is not 0.00)."""
    return (
        f"{value:.2f}" if value >= 0.1 or value == 0 or not math.isfinite(value) else f"{value:.2g}"
    )

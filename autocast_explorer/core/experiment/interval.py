"""An interval for the speedup, from the paired blocks of the ABAB protocol.

Each round of the protocol times a float32 block and, right after it, an autocast block; their
ratio (float32 ÷ autocast, a speedup) is one paired observation, and slow drift of the machine
hits both halves of a pair alike.

The speedup is the 20%-trimmed mean of the log ratios (a trimmed geometric mean), and its
interval Yuen's t-interval for it (the winsorized variance): robust to a fifth of the pairs at
each end being off, deterministic, and narrower for the same pairs than the median's
order-statistic interval (adaptive sweeps reached ±3% in 0.40–0.46× of the fixed sweep's time
against 0.52–0.56×, side by side; bench/RESULTS.md). Below
MIN_PAIRS_95 pairs there is no t-interval worth the name: the interval is [min, max] at the
coverage the binomial gives it (`median_interval`, distribution-free). See docs/measurement.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import Annotated, Any, ClassVar

from pydantic import Field, model_validator

from autocast_explorer.core.documents.field_types import Fraction, NonNegative, Whole, refuse
from autocast_explorer.core.documents.model import Part, dump
from autocast_explorer.core.experiment.pace import bounds_text
from autocast_explorer.core.experiment.pace import ratio_text as ratio_text  # also from here

#: The interval's nominal coverage; with fewer than MIN_PAIRS_95 pairs it is lower (reported).
LEVEL = 0.95
#: The fewest pairs whose [min, max] already covers the median with ≥ 95%: 1 − 2·0.5⁶ ≈ 0.969.
MIN_PAIRS_95 = 6
#: The share of the sorted log ratios left out at each end before averaging.
TRIM = 0.2


class SpeedupInterval(Part):
    """`latency.speedup_interval`: the paired speedup's interval (interval.speedup_interval)."""

    # `level` interval of the paired speedup (float32 ÷ autocast) from `pairs` ratios.
    # `estimate` is the speedup the interval is about (the ratios' trimmed geometric mean; their
    # median below MIN_PAIRS_95 pairs): the run's speedup figure, always inside the interval
    # (the ratio of the two modes' medians need not be). None in files written before it.
    schema_name: ClassVar[str] = "interval"

    low: NonNegative
    high: NonNegative
    level: Annotated[Fraction, Field(description="coverage: 0.95, less with under 6 pairs")]
    pairs: Annotated[Whole, Field(description="paired rounds the interval is built from")] = 0
    estimate: Annotated[NonNegative | None, Field(exclude_if=lambda value: value is None)] = None

    @model_validator(mode="after")
    def _ordered(self) -> SpeedupInterval:
        if self.high < self.low:
            raise refuse("expected a number ≥ low", at="high")
        if self.estimate is not None and not self.low <= self.estimate <= self.high:
            raise refuse("expected a number from low to high", at="estimate")
        return self

    @property
    def width(self) -> float:
        """high ÷ low: 1.0 is a point, 1.25 spans a quarter."""
        return self.high / self.low if self.low > 0 else math.inf

    @property
    def half_width(self) -> float:
        """Relative half-width, symmetric in log space: √(high/low) − 1 (0.05 is ±5%)."""
        return math.sqrt(self.width) - 1

    @property
    def shown(self) -> bool:
        """Whether this is a 95% interval: one of lower coverage (under MIN_PAIRS_95 pairs) is
        never shown to a learner as an interval."""
        return self.level >= LEVEL - 1e-9

    def text(self) -> str:
        """'95%: 1.66–1.79'; bounds below 0.1 keep two significant digits ('0.0024–0.0026',
        never '0.00–0.00'), bounds that differ enough digits to read apart ('0.998–1.003').
        Of lower coverage: '3 paired rounds: too few for a 95% interval'."""
        if not self.shown:
            return self.too_few_text()
        return f"{self.level:.0%}: {bounds_text(self.low, self.high)}"

    def slower_text(self) -> str:
        """The same interval as slowdown factors (1 ÷ speedup): '95%: 1.35–1.46'."""
        if not self.shown:
            return self.too_few_text()
        low = 1 / self.high if self.high > 0 else math.inf
        high = 1 / self.low if self.low > 0 else math.inf
        return f"{self.level:.0%}: {bounds_text(low, high)}"

    def too_few_text(self) -> str:
        return f"{self.pairs} paired rounds: too few for a 95% interval"

    def to_dict(self) -> dict[str, Any]:
        return dump(self)


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
        low=values[j - 1], high=values[n - j], level=level, pairs=n, estimate=median
    )


def speedup_interval(
    ratios: Sequence[float], level: float = LEVEL, presorted: bool = False
) -> SpeedupInterval | None:
    """The `level` interval of the 20%-trimmed mean of log(ratios) (Yuen: the winsorized
    variance, t with h − 1 degrees of freedom for the h ratios kept), as ratios; `estimate`
    is exp(trimmed mean). None for fewer than 2 ratios; [min, max] below MIN_PAIRS_95."""
    values = ratios if presorted else sorted(r for r in ratios if math.isfinite(r) and r > 0)
    n = len(values)
    if n < MIN_PAIRS_95:
        return median_interval(values, level, presorted=True)
    trimmed_mean, variance = _trimmed_log_mean_and_variance(values)
    half = _yuen_scale(n, level) * math.sqrt(variance)
    return SpeedupInterval(
        low=math.exp(trimmed_mean - half),
        high=math.exp(trimmed_mean + half),
        level=level,
        pairs=n,
        estimate=math.exp(trimmed_mean),
    )


def pairs_needed(interval: SpeedupInterval, target: float, limit: int = 1_000_000) -> int:
    """How many pairs `interval` needs to be within ±`target`, if the pairs still to come
    spread as its own did: the fewest whose Yuen half-width, at the winsorized variance its
    width implies, is small enough. Its own pairs when it is already; `limit` when no count up
    to it would do. Short of MIN_PAIRS_95 pairs (no 95% interval yet) it says MIN_PAIRS_95."""
    n = interval.pairs
    if n < MIN_PAIRS_95 or interval.low <= 0:
        return max(n, MIN_PAIRS_95)
    half = math.log(interval.high / interval.low) / 2
    wanted = math.log1p(target)
    if half <= wanted:
        return n
    spread = half / _yuen_scale(n, interval.level)  # the winsorized standard deviation

    def enough(count: int) -> bool:
        return _yuen_scale(count, interval.level) * spread <= wanted

    high = n
    while not enough(high):
        if high >= limit:
            return limit
        high = min(2 * high, limit)
    low = max(high // 2, n)  # too few (n itself was checked)
    while high - low > 1:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle
    return high


def _trimmed_log_mean_and_variance(values: Sequence[float]) -> tuple[float, float]:
    """The 20%-trimmed mean of the logs of sorted `values` and their winsorized variance."""
    n = len(values)
    logs = [math.log(v) for v in values]  # sorted, as `values`
    cut = int(TRIM * n)
    kept = n - 2 * cut
    trimmed_mean = sum(logs[cut : n - cut]) / kept
    winsorized = [logs[cut]] * cut + logs[cut : n - cut] + [logs[n - cut - 1]] * cut
    center = sum(winsorized) / n
    return trimmed_mean, sum((x - center) ** 2 for x in winsorized) / (n - 1)


def _yuen_scale(n: int, level: float) -> float:
    """Yuen's half-width (in logs) for n pairs, per unit of winsorized standard deviation."""
    kept = n - 2 * int(TRIM * n)
    return t_quantile(0.5 + level / 2, kept - 1) * math.sqrt((n - 1) / (kept * (kept - 1)))


def t_quantile(p: float, df: int) -> float:
    """Student's t quantile (Cornish–Fisher expansion in 1/df; within 0.2% of the tables for
    df ≥ 3 at p = 0.975, the only level used)."""
    z = NormalDist().inv_cdf(p)
    v = float(df)
    return (
        z
        + (z**3 + z) / (4 * v)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
        + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / (92160 * v**4)
    )

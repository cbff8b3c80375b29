"""The timing protocol: cold call, warm-up, sized blocks, modes alternated ABAB.

Modelled on torch.utils.benchmark's blocked_autorange (warm-up, blocks long enough that the
timer's own cost is negligible, median and IQR), with one change that matters here: the two
modes' blocks are interleaved, so drift on a shared, noisy CPU hits both modes alike.
"""

from __future__ import annotations

import contextlib
import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from autocast_explorer.core.runtime.progress import Reporter

#: Share of a block that timer overhead may take: perf_counter costs ~100 ns, blocks ≥ 1 ms.
MIN_BLOCK_SECONDS = 0.001
MAX_BLOCK_SECONDS = 0.1
TARGET_BLOCKS = 20
MIN_BLOCKS = 5
WARMUP_CALLS = 3
NOISY_IQR_RATIO = 0.10

#: A factory for the context a mode's blocks run in (see `measure_alternating`).
BlockContext = Callable[[], contextlib.AbstractContextManager[object]]


@dataclass(frozen=True)
class LatencyStats:
    """Per-forward latency of one mode, from `samples` timed blocks of `block_size` calls."""

    median_ms: float
    p25_ms: float
    p75_ms: float
    iqr_ms: float
    samples: int
    cold_ms: float
    block_size: int
    times_ms: tuple[float, ...] = field(default=(), repr=False)

    @property
    def noisy(self) -> bool:
        """torch.utils.benchmark's warning rule: IQR ≥ 10% of the median."""
        return self.median_ms > 0 and self.iqr_ms / self.median_ms >= NOISY_IQR_RATIO

    def gflops(self, flops: int) -> float:
        return flops / (self.median_ms * 1e-3) / 1e9 if self.median_ms > 0 else 0.0

    @classmethod
    def from_times(cls, times_ms: Sequence[float], cold_ms: float, block_size: int) -> LatencyStats:
        values = np.asarray(times_ms, dtype=float)
        p25, median, p75 = (float(v) for v in np.percentile(values, [25, 50, 75]))
        return cls(
            median_ms=median,
            p25_ms=p25,
            p75_ms=p75,
            iqr_ms=p75 - p25,
            samples=len(values),
            cold_ms=cold_ms,
            block_size=block_size,
            times_ms=tuple(float(v) for v in values),
        )


def _time_block(fn: Callable[[], object], calls: int) -> float:
    """Seconds per call over one block of `calls` back-to-back calls."""
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def _warm_up(time_one_call: Callable[[], float], min_time: float) -> list[float]:
    """Time single calls, at least WARMUP_CALLS and for ~5% of the budget; seconds per call.

    Their median, not the first or the fastest, sizes the blocks: on a shared CPU one early
    call can be far off in either direction.
    """
    budget = min(0.05 * min_time, 0.25)
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < WARMUP_CALLS or (time.perf_counter() - start < budget and len(times) < 1000):
        times.append(time_one_call())
    return times


def cold_call_ms(fn: Callable[[], object]) -> float:
    """The first call's time: includes one-time costs (kernel selection, allocation)."""
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1e3


def measure_alternating(
    modes: Sequence[Callable[[], object]],
    min_time: float,
    reporter: Reporter | None = None,
    cold_ms: Sequence[float] | None = None,
    labels: Sequence[str] | None = None,
    block_contexts: Sequence[BlockContext | None] | None = None,
) -> list[LatencyStats]:
    """Time each callable for at least `min_time` seconds, alternating blocks A B A B …

    Cancellation is checked between blocks. `cold_ms` carries first-call times taken earlier
    (before hooks or warm-up touched the model); otherwise the first warm-up call is used.
    The cold call counts toward each mode's `min_time`, and when one call is already a whole
    block (slow forwards) the warm-up calls are kept as samples, so slow forwards do not spend
    several untimed calls outside the budget (fast ones warm up for at most 5% of it).
    `block_contexts[i]`, when given, is entered around every block of mode i, outside the
    timer: it lets a mode keep state across the calls of a block (one autocast region around
    a loop of forwards, with its weight casts cached) while the other modes run outside it.
    """
    reporter = reporter or Reporter()
    contexts = list(block_contexts or [None] * len(modes))

    def block(i: int, calls: int) -> float:
        factory = contexts[i]
        with factory() if factory is not None else contextlib.nullcontext():
            return _time_block(modes[i], calls)

    labels = list(labels or [f"mode {i + 1}" for i in range(len(modes))])
    colds: list[float] = list(cold_ms) if cold_ms is not None else []
    per_call: list[float] = []
    warm_times: list[list[float]] = []
    for index in range(len(modes)):
        reporter.check()
        if cold_ms is None:
            colds.append(block(index, 1) * 1e3)
        warm_times.append(_warm_up(functools.partial(block, index, 1), min_time))
        per_call.append(max(float(np.median(warm_times[-1])), 1e-7))
        reporter.report(0.05 * (index + 1) / len(modes), f"warming up {labels[index]}")

    # Blocks of every mode last about as long as the slowest single call (at least the target):
    # the modes then reach their budgets in the same number of rounds, and a slow mode is not
    # kept running while a fast one fills its budget in many short blocks.
    block_target = min(max(min_time / TARGET_BLOCKS, MIN_BLOCK_SECONDS), MAX_BLOCK_SECONDS)
    block_target = min(max(block_target, *per_call), MAX_BLOCK_SECONDS)
    block_sizes = [max(1, math.ceil(block_target / t - 1e-6)) for t in per_call]
    durations = [t * n for t, n in zip(per_call, block_sizes, strict=True)]
    min_blocks = [MIN_BLOCKS if d * MIN_BLOCKS <= min_time else 3 for d in durations]
    # A slow mode's warm-up calls are blocks of one call already: keep them as samples.
    samples: list[list[float]] = [
        [t * 1e3 for t in warm_times[i]] if block_sizes[i] == 1 else [] for i in range(len(modes))
    ]
    spent = [colds[i] / 1e3 + sum(samples[i]) / 1e3 for i in range(len(modes))]

    def done(i: int) -> bool:
        return spent[i] >= min_time and len(samples[i]) >= min_blocks[i]

    while not all(done(i) for i in range(len(modes))):
        for i in range(len(modes)):
            # Modes alternate while they run; one that has its budget and blocks sits out the
            # last rounds (blocks are balanced above, so that tail is short), rather than a slow
            # mode running far past its budget while a fast one fills its own.
            if done(i):
                continue
            reporter.check()
            seconds = block(i, block_sizes[i])
            samples[i].append(seconds * 1e3)
            spent[i] += seconds * block_sizes[i]
        fraction = min(min(s / min_time for s in spent), 1.0)
        reporter.report(0.05 + 0.95 * fraction, f"timing {' vs '.join(labels)}")
    return [
        LatencyStats.from_times(samples[i], colds[i], block_sizes[i]) for i in range(len(modes))
    ]

"""The timing protocol: cold call, warm-up, sized blocks, modes alternated ABAB.

Modelled on torch.utils.benchmark's blocked_autorange (warm-up, blocks long enough that the
timer's own cost is negligible, median and IQR), with one change that matters here: the two
modes' blocks are interleaved, so drift on a shared, noisy CPU hits both modes alike. Each
round's two neighbouring blocks are a pair whose ratio is one speedup observation (interval.py);
blocks stalled by another program are flagged, kept on record and re-measured, and a run with a
target goes on until its interval is narrow enough (see docs/measurement.md).
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, ClassVar

import numpy as np
from pydantic import Field, model_validator

from autocast_explorer.core.documents.field_types import (
    NonNegative,
    NonNegatives,
    PositiveWhole,
    Text,
    Whole,
)
from autocast_explorer.core.documents.model import Part
from autocast_explorer.core.experiment.interval import (
    LEVEL,
    MIN_PAIRS_95,
    SpeedupInterval,
    pairs_needed,
    speedup_interval,
)
from autocast_explorer.core.runtime.progress import Reporter

#: Share of a block that timer overhead may take: perf_counter costs ~100 ns, blocks ≥ 1 ms.
MIN_BLOCK_SECONDS = 0.001
MAX_BLOCK_SECONDS = 0.1
TARGET_BLOCKS = 20
MIN_BLOCKS = 5
WARMUP_CALLS = 3
NOISY_IQR_RATIO = 0.10
#: A block over STALL_FACTOR × its mode's running median (of STALL_AFTER kept blocks or more)
#: was stalled by something else on the machine; steady blocks vary by a few percent.
STALL_FACTOR = 2.0
STALL_AFTER = 3
#: A block over OVERSHOOT × its intended length resizes the mode's later blocks.
OVERSHOOT = 4.0

#: A factory for the context a mode's blocks run in (see `measure_alternating`).
BlockContext = Callable[[], contextlib.AbstractContextManager[object]]


class LatencyStats(Part):
    """Per-forward latency of one mode, from `samples` timed blocks of `block_size` calls: the
    latency object every document writes."""

    schema_name: ClassVar[str] = "latency"

    median_ms: Annotated[NonNegative, Field(description="median per-call time of the timed blocks")]
    p25_ms: NonNegative
    p75_ms: NonNegative
    iqr_ms: NonNegative
    samples: Annotated[Whole, Field(description="timed blocks")]
    cold_ms: Annotated[NonNegative, Field(description="the first call, timed on its own")]
    block_size: Annotated[PositiveWhole, Field(description="calls per timed block")] = 1
    #: The achieved rate, written for readers where the FLOPs are known (a result's latency,
    #: `with_gflops`); the program asks `gflops(flops)`, a file's own is not read.
    written_gflops: Annotated[NonNegative, Field(alias="gflops")] = 0.0
    times_ms: Annotated[
        NonNegatives, Field(description="each block's per-call time", repr=False)
    ] = ()

    @model_validator(mode="after")
    def _rate_not_read(self) -> LatencyStats:
        object.__setattr__(self, "written_gflops", 0.0)
        self.model_fields_set.discard("written_gflops")
        return self

    @property
    def noisy(self) -> bool:
        """torch.utils.benchmark's warning rule: IQR ≥ 10% of the median."""
        return self.median_ms > 0 and self.iqr_ms / self.median_ms >= NOISY_IQR_RATIO

    def gflops(self, flops: int) -> float:
        return flops / (self.median_ms * 1e-3) / 1e9 if self.median_ms > 0 else 0.0

    def with_gflops(self, flops: int) -> LatencyStats:
        """These statistics with the rate `flops` per call gives, to be written beside them."""
        return self.model_copy(update={"written_gflops": self.gflops(flops)})

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


class Stall(Part):
    """One block far over its mode's running median: left out of the statistics, re-measured."""

    # `round` is the protocol's round (0-based).
    mode: Text
    round: Whole
    ms: Annotated[NonNegative, Field(description="the stalled block's per-call time")]
    median_ms: Annotated[
        NonNegative, Field(description="its mode's median of the blocks kept before it")
    ]


@dataclass(frozen=True)
class PairedTiming:
    """What `measure_paired` found: per-mode statistics, the interval, the stalls, why it stopped.

    `stopped` is "budget" (fixed protocol: the budget was spent), "precise" (the interval
    reached the target half-width) or "max_time" (the target was not reached in the time
    allowed, or was out of its reach: `measure_paired`'s `budget`).
    """

    stats: tuple[LatencyStats, ...]
    interval: SpeedupInterval | None
    stalls: tuple[Stall, ...]
    rounds: int
    stopped: str
    target: float | None = None
    #: Per round, each mode's kept block in ms (None: stalled, or it sat the round out).
    rounds_ms: tuple[tuple[float | None, ...], ...] = ()

    def interval_between(self, i: int, j: int) -> SpeedupInterval | None:
        """The interval of mode i ÷ mode j (as `interval` is of 0 ÷ 1) over the rounds where
        both kept a block (time ratios: above 1, mode j was faster); None with fewer than 2."""
        return speedup_interval(
            [a / b for r in self.rounds_ms if (a := r[i]) is not None and (b := r[j]) is not None]
        )


@dataclass(frozen=True)
class TargetBudget:
    """How long a run with a target goes on once it has a 95% interval, in seconds per mode
    (a sweep's point: its part of the sweep's time; without an interval `max_time` holds).

    `cap`: the most. `give_up_after`: past this, the run stops as soon as its target is out of
    reach: the pairs it still needs, projected from the interval's width
    (interval.pairs_needed) at one block per mode each, would outlast `cap`."""

    cap: float
    give_up_after: float


Clock = Callable[[], float]


def default_clock() -> float:
    """What every timing here reads when given no clock: time.perf_counter (looked up at each
    read, so a patched one is honoured). Tests of whole runs swap this for a steady fake clock."""
    return time.perf_counter()


def _now(clock: Clock | None) -> float:
    return clock() if clock is not None else default_clock()


def _time_block(fn: Callable[[], object], calls: int, clock: Clock | None = None) -> float:
    """Seconds per call over one block of `calls` back-to-back calls."""
    start = _now(clock)
    for _ in range(calls):
        fn()
    return (_now(clock) - start) / calls


def default_block_timer(
    fn: Callable[[], object], calls: int, clock: Clock | None, mode: int
) -> float:
    """Seconds per call over one block of the paired protocol: `calls` back-to-back calls of
    `fn`, the run's `mode`-th mode (0: the float32 side). Looked up at each block, so a test
    may swap it to decide what each mode's blocks take while the forwards still run (the
    tester's kit: `timing_noise`); the real one ignores `mode`."""
    return _time_block(fn, calls, clock)


def _warm_up(
    time_one_call: Callable[[], float],
    min_time: float,
    clock: Clock | None = None,
    check: Callable[[], None] = lambda: None,
) -> list[float]:
    """Time single calls, at least WARMUP_CALLS and for ~5% of the budget; seconds per call.

    Their median, not the first or the fastest, sizes the blocks: on a shared CPU one early
    call can be far off in either direction. `check` runs before every call (it raises to
    cancel), so a cancel waits for one forward at most.
    """
    budget = min(0.05 * min_time, 0.25)
    times: list[float] = []
    start = _now(clock)
    while len(times) < WARMUP_CALLS or (_now(clock) - start < budget and len(times) < 1000):
        check()
        times.append(time_one_call())
    return times


def cold_call_ms(fn: Callable[[], object], clock: Clock | None = None) -> float:
    """The first call's time: includes one-time costs (kernel selection, allocation)."""
    start = _now(clock)
    fn()
    return (_now(clock) - start) * 1e3


def _sorted_median(values: Sequence[float]) -> float:
    """The median of already sorted `values` (NaN for none)."""
    n = len(values)
    if n == 0:
        return math.nan
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def is_stall(block_ms: float, kept_sorted: Sequence[float]) -> bool:
    """A block over STALL_FACTOR × the median of the blocks kept so far (given sorted; needs
    STALL_AFTER of them)."""
    if len(kept_sorted) < STALL_AFTER:
        return False
    return block_ms > STALL_FACTOR * _sorted_median(kept_sorted)


def measure_alternating(
    modes: Sequence[Callable[[], object]],
    min_time: float,
    reporter: Reporter | None = None,
    cold_ms: Sequence[float] | None = None,
    labels: Sequence[str] | None = None,
    block_contexts: Sequence[BlockContext | None] | None = None,
) -> list[LatencyStats]:
    """Each mode's statistics from `measure_paired` with its fixed budget: no target and no
    time limit (placements, benches: every mode gets `min_time` of kept blocks)."""
    timing = measure_paired(
        modes, min_time, reporter, cold_ms, labels, block_contexts, max_time=math.inf
    )
    return list(timing.stats)


def measure_paired(
    modes: Sequence[Callable[[], object]],
    min_time: float,
    reporter: Reporter | None = None,
    cold_ms: Sequence[float] | None = None,
    labels: Sequence[str] | None = None,
    block_contexts: Sequence[BlockContext | None] | None = None,
    max_time: float | None = None,
    target: float | None = None,
    clock: Clock | None = None,
    budget: TargetBudget | None = None,
) -> PairedTiming:
    """Time each callable for at least `min_time` seconds, alternating blocks A B A B …

    Cancellation is checked before every warm-up call and between blocks (a block lasts at
    most MAX_BLOCK_SECONDS, or one call when a call is longer). `cold_ms` carries first-call
    times taken earlier (before hooks or warm-up touched the model); otherwise the first
    warm-up call is used.
    The cold call counts toward each mode's `min_time`, and when one call is already a whole
    block (slow forwards) the warm-up calls are kept as samples, so slow forwards do not spend
    several untimed calls outside the budget (fast ones warm up for at most 5% of it).
    `block_contexts[i]`, when given, is entered around every block of mode i, outside the
    timer: it lets a mode keep state across the calls of a block (one autocast region around
    a loop of forwards, with its weight casts cached) while the other modes run outside it.

    A block over STALL_FACTOR × its mode's running median is a stall: recorded in `stalls`,
    left out of the statistics and of the pairs, and re-measured (it does not count toward
    `min_time`). With two modes, each round whose two blocks were both kept is a pair, and the
    interval of the median pair ratio comes back. With a `target` (relative half-width, 0.05
    for ±5%) the run goes on past `min_time` until the interval is that narrow at 95%. With or
    without one it stops once the modes together have used `max_time` seconds each (stalls
    included; default 2 × `min_time`; `math.inf`: no limit), even short of `min_time`: forwards
    that slowed 70× after their blocks were sized must not hold the run for minutes.
    With a `target` and a `budget`, a run that has a 95% interval also stops ("max_time") at
    the budget's `cap`, or past its `give_up_after` once the target is out of reach
    (TargetBudget): a sweep gives its time to the points whose interval can still close.
    `clock` (seconds; default time.perf_counter) lets tests run the protocol on a fake clock.
    """
    run = _PairedRun(
        modes,
        min_time,
        reporter or Reporter(),
        labels,
        block_contexts,
        (max_time, budget),
        target,
        clock,
    )
    run.warm_up(cold_ms)
    while (stopped := run.stop_reason()) is None:
        run.play_round()
    return run.result(stopped)


class _PairedRun:
    """The state of one `measure_paired` run, its steps named: warm-up and block sizing, the
    paired rounds (stalls set aside, overlong blocks shortened), the stop rule, the result.

    The order of calls and clock reads is the protocol's: tests run it on a scripted clock.
    """

    def __init__(
        self,
        modes: Sequence[Callable[[], object]],
        min_time: float,
        reporter: Reporter,
        labels: Sequence[str] | None,
        block_contexts: Sequence[BlockContext | None] | None,
        limits: tuple[float | None, TargetBudget | None],
        target: float | None,
        clock: Clock | None,
    ) -> None:
        max_time, self.budget = limits  # see measure_paired
        self.modes = modes
        self.min_time = min_time
        self.reporter = reporter
        self.contexts = list(block_contexts or [None] * len(modes))
        self.max_time = max(max_time if max_time is not None else 2 * min_time, min_time)
        self.labels = list(labels or [f"mode {i + 1}" for i in range(len(modes))])
        self.target = target
        self.clock = clock
        self.colds: list[float] = []
        self.block_target = 0.0
        self.block_sizes: list[int] = []
        self.min_blocks: list[int] = []
        self.samples: list[list[float]] = []  # each mode's kept blocks, ms per call
        self.spent: list[float] = []  # seconds of kept blocks (and the cold call): the budget
        self.ordered: list[list[float]] = []  # the kept blocks sorted: the running median
        self.used: list[float] = []  # spent, plus stalled blocks: what `max_time` bounds
        self.stalls: list[Stall] = []
        self.ratios: list[float] = []  # the pairs' ratios, sorted
        self.rounds_ms: list[tuple[float | None, ...]] = []
        self.interval: SpeedupInterval | None = None
        self.rounds = 0
        self.shown = 0.0  # progress reported so far (with a target)

    @property
    def paired(self) -> bool:
        return len(self.modes) == 2

    def _block(self, i: int, calls: int) -> float:
        factory = self.contexts[i]
        with factory() if factory is not None else contextlib.nullcontext():
            return default_block_timer(self.modes[i], calls, self.clock, i)

    def warm_up(self, cold_ms: Sequence[float] | None) -> None:
        """Each mode's cold call (unless given) and warm-up calls, then the blocks sized."""
        self.colds = list(cold_ms) if cold_ms is not None else []
        per_call: list[float] = []
        warm_times: list[list[float]] = []
        for index in range(len(self.modes)):
            self.reporter.check()
            if cold_ms is None:
                self.colds.append(self._block(index, 1) * 1e3)
            warm_times.append(
                _warm_up(
                    functools.partial(self._block, index, 1),
                    self.min_time,
                    self.clock,
                    self.reporter.check,
                )
            )
            per_call.append(max(float(np.median(warm_times[-1])), 1e-7))
            self.reporter.report(
                0.05 * (index + 1) / len(self.modes), f"warming up {self.labels[index]}"
            )
        self._size_blocks(per_call, warm_times)

    def _size_blocks(self, per_call: list[float], warm_times: list[list[float]]) -> None:
        """Blocks of every mode last about as long as the slowest single call (at least the
        target): the modes then reach their budgets in the same number of rounds, and a slow
        mode is not kept running while a fast one fills its budget in many short blocks."""
        min_time = self.min_time
        block_target = min(max(min_time / TARGET_BLOCKS, MIN_BLOCK_SECONDS), MAX_BLOCK_SECONDS)
        self.block_target = min(max(block_target, *per_call), MAX_BLOCK_SECONDS)
        self.block_sizes = [max(1, math.ceil(self.block_target / t - 1e-6)) for t in per_call]
        durations = [t * n for t, n in zip(per_call, self.block_sizes, strict=True)]
        self.min_blocks = [MIN_BLOCKS if d * MIN_BLOCKS <= min_time else 3 for d in durations]
        # A slow mode's warm-up calls are blocks of one call already: keep them as samples.
        self.samples = [
            [t * 1e3 for t in warm_times[i]] if self.block_sizes[i] == 1 else []
            for i in range(len(self.modes))
        ]
        self.spent = [
            self.colds[i] / 1e3 + sum(self.samples[i]) / 1e3 for i in range(len(self.modes))
        ]
        # Sorted, the running median a stall is judged by is read in O(1) (np.median of the
        # whole list per block cost 6% of an adaptive sweep's time).
        self.ordered = [sorted(kept) for kept in self.samples]
        self.used = list(self.spent)

    def enough(self, i: int) -> bool:
        return self.spent[i] >= self.min_time and len(self.samples[i]) >= self.min_blocks[i]

    def precise(self) -> bool:
        target, interval = self.target, self.interval
        if target is None:
            return True
        return interval is not None and interval.level >= LEVEL and interval.half_width <= target

    def stop_reason(self) -> str | None:
        """The stop rule: "budget" or "precise" once every mode has its budget (and, with a
        target, the interval is narrow enough); "max_time" once the allowance is spent; None
        to play another round."""
        n = len(self.modes)
        if all(self.enough(i) for i in range(n)) and self.precise():
            return "budget" if self.target is None else "precise"
        if self.allowance_spent() and all(
            len(self.samples[i]) >= min(self.min_blocks[i], STALL_AFTER) for i in range(n)
        ):
            # The whole allowance, all modes together (each with 3 blocks at least): one mode
            # whose forwards slowed 70× after its blocks were sized must not keep the other
            # running for minutes. A mode's first STALL_AFTER blocks are never stalls, and a
            # block far over its intended length shrinks the next ones, so this ends soon.
            return "max_time"
        return None

    def allowance_spent(self) -> bool:
        """`max_time` used, all modes together; or, with a 95% interval, the target budget's
        `cap`, or its `give_up_after` with the target out of reach (TargetBudget)."""
        used, n = sum(self.used), len(self.modes)
        if used >= n * self.max_time:
            return True
        budget, target, interval = self.budget, self.target, self.interval
        if budget is None or target is None or interval is None or interval.level < LEVEL:
            return False  # short of an interval a run goes on: it is the least a run must say
        if used >= n * budget.cap:
            return True
        if used < n * budget.give_up_after:
            return False
        per_pair = sum(
            size * _sorted_median(kept) / 1e3
            for size, kept in zip(self.block_sizes, self.ordered, strict=True)
        )
        more = pairs_needed(interval, target) - interval.pairs
        return more * per_pair > n * budget.cap - used

    def play_round(self) -> None:
        """One block per mode in turn, the pair's ratio taken, progress reported."""
        all_enough = all(self.enough(i) for i in range(len(self.modes)))
        kept: list[float | None] = [None] * len(self.modes)
        for i in range(len(self.modes)):
            # Modes alternate while they run; one that has its budget and blocks sits out the
            # last rounds of the fixed budget (blocks are balanced above, so that tail is
            # short), rather than a slow mode running far past its budget while a fast one
            # fills its own. Past the budget (narrowing the interval) every mode runs.
            if self.enough(i) and not all_enough:
                continue
            kept[i] = self._kept_block(i)
        self.rounds_ms.append(tuple(kept))
        if self.paired and kept[0] is not None and kept[1] is not None:
            self._pair(kept[0], kept[1], all_enough)
        self.rounds += 1
        self._report_progress(all_enough)

    def _kept_block(self, i: int) -> float | None:
        """One timed block of mode i, in ms per call; None when it stalled (recorded, left out).
        A block far over its intended length shortens the mode's later blocks."""
        self.reporter.check()
        size = self.block_sizes[i]
        seconds = self._block(i, size)
        ms = seconds * 1e3
        self.used[i] += seconds * size
        overshot = seconds * size > OVERSHOOT * self.block_target
        if overshot and size > 1 and math.isfinite(self.max_time):
            # Forwards got far slower than when the blocks were sized (another program
            # took the cores): shorter blocks keep the run's length and Cancel bounded.
            self.block_sizes[i] = max(1, math.ceil(self.block_target / seconds))
        if is_stall(ms, self.ordered[i]):
            self.stalls.append(
                Stall(
                    mode=self.labels[i],
                    round=self.rounds,
                    ms=ms,
                    median_ms=_sorted_median(self.ordered[i]),
                )
            )
            return None
        self.samples[i].append(ms)
        bisect.insort(self.ordered[i], ms)
        self.spent[i] += seconds * self.block_sizes[i]
        return ms

    def _pair(self, first_ms: float, second_ms: float, all_enough: bool) -> None:
        ratio = first_ms / second_ms if second_ms > 0 else math.inf
        if math.isfinite(ratio) and ratio > 0:
            bisect.insort(self.ratios, ratio)  # sorted: no sort per round
        if all_enough or len(self.ratios) >= MIN_PAIRS_95:
            self.interval = speedup_interval(self.ratios, presorted=True)

    def _report_progress(self, all_enough: bool) -> None:
        fraction = min(min(s / self.min_time for s in self.spent), 1.0)
        if self.target is not None:
            # Progress over the whole allowance, never backwards: the minimum budget first,
            # then the time spent narrowing the interval.
            allowance = len(self.modes) * self.max_time
            fraction = max(
                self.shown,
                fraction * self.min_time / self.max_time,
                min(sum(self.used) / allowance, 1),
            )
            self.shown = fraction
        title = f"timing {' vs '.join(self.labels)}"
        if all_enough and self.target is not None:
            interval = self.interval
            width = f" (±{interval.half_width:.0%})" if interval is not None else ""
            self.reporter.report(0.05 + 0.95 * fraction, f"{title}: narrowing the interval{width}")
        else:
            self.reporter.report(0.05 + 0.95 * fraction, title)

    def result(self, stopped: str) -> PairedTiming:
        interval = self.interval
        if self.paired:
            interval = speedup_interval(self.ratios, presorted=True)
        return PairedTiming(
            stats=tuple(
                LatencyStats.from_times(self.samples[i], self.colds[i], self.block_sizes[i])
                for i in range(len(self.modes))
            ),
            interval=interval,
            stalls=tuple(self.stalls),
            rounds=self.rounds,
            stopped=stopped,
            target=self.target,
            rounds_ms=tuple(self.rounds_ms),
        )

"""Whether a measured speedup is real: the timing evidence of a run, and the call it supports.

The call is made from the speedup's interval (interval.py), not from the point estimate alone:
faster / slower / about the same only when the whole interval says so; "can't tell" when it
straddles the edge of "about the same" (pace.SAME_SPEED); "too noisy to tell" when it is wider
than NOISY_WIDTH, with the measured reasons (other programs' CPU time, stalled blocks, clock
changes) and what helps. A "too noisy" run states no speedup in a headline, the status bar or
a lesson grade: the figure stays in the details only. Results saved before intervals existed
carry no evidence and are called from their speedup as before.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any, Literal, cast

from pydantic import Field

from autocast_explorer.core.documents.field_types import NullableNonNegative, Whole
from autocast_explorer.core.documents.model import Part
from autocast_explorer.core.experiment.interval import MIN_PAIRS_95, SpeedupInterval
from autocast_explorer.core.experiment.pace import SAME_SPEED, pace
from autocast_explorer.core.experiment.timing import STALL_FACTOR, PairedTiming, Stall
from autocast_explorer.core.hardware.load import MachineLoad

#: An interval whose high ÷ low exceeds this cannot tell the modes apart: "too noisy to tell".
NOISY_WIDTH = 1.25
#: A run goes on until its interval is within ±RUN_TARGET (or its maximum time is spent).
RUN_TARGET = 0.05
#: A sweep point stops as soon as its interval is within ±SWEEP_TARGET (or its budget is spent).
SWEEP_TARGET = 0.03
#: Other programs using this many cores or more are named as a reason.
BUSY_CORES = 0.25
#: A run in which more than this share of the timed blocks stalled was disturbed throughout:
#: its interval is built from the blocks between disturbances and cannot be trusted
#: (measured: with one busy loop beside 2 threads on 2 cores, a run whose quiet call is 0.65×
#: read 1.36× faster, 1.21–1.37, after 121 stalls).
STALL_SHARE = 0.2
#: The calls that grade and headline a speedup; "unclear", "noisy" and "untimed" do not.
GRADED = ("faster", "slower", "same")


#: Why timing stopped (TimingEvidence.stopped).
Stopped = Literal["budget", "precise", "max_time"]


class TimingEvidence(Part):
    """The keys paired timing adds to a `latency` object (result and sweep point); all optional:
    files written before intervals lack them."""

    # What the protocol saw besides the medians: the interval, the stalls, the machine's load.
    # `stopped`: "precise" (the interval reached `target`), "max_time" (it did not, in time) or
    # "budget" (a fixed budget, no target); `blocks`: kept, all modes (stalls come on top).

    interval: Annotated[
        SpeedupInterval | None,
        Field(
            alias="speedup_interval",
            description="null: fewer than 2 pairs (see docs/measurement.md)",
        ),
    ] = None
    stalls: tuple[Stall, ...] = ()
    load: MachineLoad | None = None
    stopped: Stopped = "budget"
    target: Annotated[
        NullableNonNegative, Field(description="the half-width aimed at (null: none)")
    ] = None
    blocks: Annotated[Whole, Field(description="timed blocks kept, all modes")] = 0

    @classmethod
    def from_timing(cls, timing: PairedTiming, load: MachineLoad | None = None) -> TimingEvidence:
        return cls(
            interval=timing.interval,
            stalls=timing.stalls,
            load=load,
            stopped=cast(Stopped, timing.stopped),  # checked here, as from a file
            target=timing.target,
            blocks=sum(s.samples for s in timing.stats),
        )

    def to_fields(self) -> dict[str, Any]:
        """The keys this adds to a document's `latency` part (a subclass of this one)."""
        return {
            "speedup_interval": self.interval,
            **{name: getattr(self, name) for name in _SECTION_KEYS},
        }

    @classmethod
    def from_section(cls, section: TimingEvidence) -> TimingEvidence | None:
        """The evidence of a read `latency` part; None for documents written before intervals."""
        if "interval" not in section.model_fields_set:
            return None
        return cls(interval=section.interval, **{k: getattr(section, k) for k in _SECTION_KEYS})


_SECTION_KEYS = ("stalls", "load", "stopped", "target", "blocks")


@dataclass(frozen=True)
class SpeedCall:
    """The call a speedup supports: `kind` is "faster", "slower", "same", "unclear" (the
    interval straddles the edge of "about the same"), "noisy" (too wide to tell) or "untimed".

    `reasons` are the measured causes of a "noisy" call, `advice` what would help.
    """

    kind: str
    speedup: float
    interval: SpeedupInterval | None
    reasons: tuple[str, ...] = ()
    advice: tuple[str, ...] = ()

    @property
    def graded(self) -> bool:
        """True when the speedup may be stated as a finding (headline, status bar, grades)."""
        return self.kind in GRADED

    @property
    def too_noisy(self) -> bool:
        return self.kind == "noisy"

    def interval_text(self, slower: bool = False) -> str:
        """' (95%: 1.66–1.79)', as slowdown factors when `slower`; '' without an interval."""
        if self.interval is None:
            return ""
        return f" ({self.interval.slower_text() if slower else self.interval.text()})"


def _edge_words(interval: SpeedupInterval) -> str:
    """Which two calls an interval that straddles an edge of "about the same" spans."""
    if interval.high > SAME_SPEED and interval.low < 1 / SAME_SPEED:
        return "slower, about the same and faster"
    if interval.high > SAME_SPEED:
        return "about the same and faster"
    return "slower and about the same"


def straddle_text(call: SpeedCall) -> str:
    """For an "unclear" call: 'about the same and faster'."""
    return _edge_words(call.interval) if call.interval is not None else ""


#: Each call of `judge` in a few words (tables, route rows).
SPEED_CALL_WORDS: dict[str, str] = {
    "faster": "faster",
    "slower": "slower",
    "same": "about the same",
    "unclear": "can't tell",
    "noisy": "too noisy to tell",
    "untimed": "not timed",
}


#: What the speedup figure is, in a phrase for tooltips and notes.
SPEEDUP_MEANING = "the paired blocks' float32 ÷ autocast ratio (20%-trimmed geometric mean)"


def speedup_figure(
    plain_ms: float, autocast_ms: float | None, evidence: TimingEvidence | None
) -> float:
    """The speedup a run states: its interval's estimate, the paired blocks' float32 ÷ autocast
    ratios' 20%-trimmed geometric mean (always inside the interval); else plain median ÷
    autocast median (files written before it was kept). Above 1: autocast was faster; NaN:
    not timed."""
    if autocast_ms is None or autocast_ms <= 0:
        return float("nan")
    interval = evidence.interval if evidence is not None else None
    if interval is not None and interval.estimate is not None:
        return interval.estimate
    return plain_ms / autocast_ms


def speedup_basis(evidence: TimingEvidence | None) -> str:
    """How `speedup_figure` got the figure, in words (for summaries and reports)."""
    interval = evidence.interval if evidence is not None else None
    if interval is None or interval.estimate is None:
        return "plain median ÷ autocast median"
    if interval.pairs < MIN_PAIRS_95:
        return f"median of {interval.pairs} paired rounds' float32 ÷ autocast"
    return f"20%-trimmed geometric mean of {interval.pairs} paired rounds' float32 ÷ autocast"


def judge(
    speedup: float,
    evidence: TimingEvidence | None,
    threads: int | None = None,
    iqr_ratios: tuple[float, ...] = (),
) -> SpeedCall:
    """The call for `speedup` given the run's evidence (None: an old result, called by pace).

    `threads` (the run's thread count) and `iqr_ratios` (IQR ÷ median per mode) only feed the
    reasons and advice of a "noisy" call.
    """
    if speedup != speedup:
        return SpeedCall("untimed", speedup, None)
    if evidence is None:
        return SpeedCall(pace(speedup), speedup, None)
    interval = evidence.interval
    off = interval is not None and not (
        interval.low / SAME_SPEED <= speedup <= interval.high * SAME_SPEED
    )
    if interval is None or interval.width > NOISY_WIDTH or off or disturbed(evidence, threads):
        reasons, advice = _noise_reasons(speedup, evidence, threads, iqr_ratios, off)
        return SpeedCall("noisy", speedup, interval, reasons, advice)
    if interval.low >= SAME_SPEED:
        kind = "faster"
    elif interval.high <= 1 / SAME_SPEED:
        kind = "slower"
    elif interval.low >= 1 / SAME_SPEED and interval.high <= SAME_SPEED:
        kind = "same"
    else:
        kind = "unclear"
    return SpeedCall(kind, speedup, interval)


def disturbed(evidence: TimingEvidence, threads: int | None = None) -> bool:
    """Whether the run was disturbed beyond what an interval can show: more than STALL_SHARE of
    its blocks stalled, or other programs took cores its threads needed (more than the cores
    left over by `threads`, plus BUSY_CORES; None: the run used every core)."""
    total = evidence.blocks + len(evidence.stalls)
    if total and len(evidence.stalls) / total > STALL_SHARE:
        return True
    load = evidence.load
    busy = load.other_cores if load is not None else None
    if load is None or busy is None:
        return False
    spare = max(load.cores - (threads or load.cores), 0)
    return busy >= spare + BUSY_CORES


def _noise_reasons(
    speedup: float,
    evidence: TimingEvidence,
    threads: int | None,
    iqr_ratios: tuple[float, ...],
    off: bool,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    interval = evidence.interval
    reasons: list[str] = []
    if interval is None:
        reasons.append("too few paired blocks survived to give an interval")
    elif interval.width > NOISY_WIDTH:
        reasons.append(
            f"the speedup's {interval.level:.0%} interval spans a factor of "
            f"{interval.width:.2f} (over {NOISY_WIDTH:g})"
        )
    if off:
        reasons.append("the ratio of the medians lies outside the paired blocks' interval")
    load = evidence.load
    busy = load.other_cores if load is not None else None
    if load is not None and busy is not None and busy >= BUSY_CORES:
        reasons.append(load.busy_text())
    if evidence.stalls:
        total = evidence.blocks + len(evidence.stalls)
        reasons.append(
            f"{len(evidence.stalls)} of {total} timed blocks stalled (over {STALL_FACTOR:g}× "
            "their mode's running median) and were re-measured"
        )
    if load is not None and load.freq_changed:
        reasons.append(load.freq_text())
    worst = max((r for r in iqr_ratios if math.isfinite(r)), default=0.0)
    if worst >= 0.10:
        reasons.append(f"blocks of one mode varied by an IQR of {worst:.0%} of its median")
    advice: list[str] = []
    cores = load.cores if load is not None else None
    if threads is not None and cores is not None and (threads >= cores or busy):
        free = max(1, math.floor((load.free_cores if load else cores) or 1))
        if threads > free or threads >= cores:
            advice.append(f"fewer threads than cores ({min(free, max(threads - 1, 1))} here)")
    advice.append("closing other programs")
    if evidence.stopped == "max_time":
        advice.append("a longer maximum time")
    return tuple(reasons), tuple(advice)

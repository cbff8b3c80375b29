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
from typing import Any

from autocast_explorer.core.experiment.interval import SpeedupInterval
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
#: The calls that grade and headline a speedup; "unclear", "noisy" and "untimed" do not.
GRADED = ("faster", "slower", "same")
STOPPED = ("budget", "precise", "max_time")


@dataclass(frozen=True)
class TimingEvidence:
    """What the protocol saw besides the medians: the interval, the stalls, the machine's load.

    `stopped`: "precise" (the interval reached `target`), "max_time" (it did not, in time) or
    "budget" (a fixed budget, no target).
    """

    interval: SpeedupInterval | None
    stalls: tuple[Stall, ...] = ()
    load: MachineLoad | None = None
    stopped: str = "budget"
    target: float | None = None
    blocks: int = 0  # blocks kept, all modes (stalls come on top)

    @classmethod
    def from_timing(cls, timing: PairedTiming, load: MachineLoad | None = None) -> TimingEvidence:
        return cls(
            interval=timing.interval,
            stalls=timing.stalls,
            load=load,
            stopped=timing.stopped,
            target=timing.target,
            blocks=sum(s.samples for s in timing.stats),
        )

    def to_dict(self) -> dict[str, Any]:
        """The keys this adds to a document's `latency` object."""
        return {
            "speedup_interval": self.interval.to_dict() if self.interval is not None else None,
            "stalls": [s.to_dict() for s in self.stalls],
            "load": self.load.to_dict() if self.load is not None else None,
            "stopped": self.stopped,
            "target": self.target,
            "blocks": self.blocks,
        }

    @classmethod
    def from_reader(cls, r: Any) -> TimingEvidence | None:
        """From a `latency` object (a JsonReader); None for documents written before it."""
        if "speedup_interval" not in r.data:
            return None
        stopped = r.text("stopped", default="budget")
        if stopped not in STOPPED:
            raise r.fail("stopped", f"expected one of {', '.join(STOPPED)}")
        interval = r.data.get("speedup_interval")
        load = r.data.get("load")
        return cls(
            interval=None
            if interval is None
            else SpeedupInterval.from_reader(r.obj("speedup_interval")),
            stalls=tuple(Stall.from_reader(s) for s in r.objects("stalls", required=False)),
            load=None if load is None else MachineLoad.from_reader(r.obj("load")),
            stopped=stopped,
            target=None if r.data.get("target") is None else r.number("target", minimum=0),
            blocks=r.whole("blocks", minimum=0, default=0),
        )


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
    if interval is None or interval.width > NOISY_WIDTH or off:
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

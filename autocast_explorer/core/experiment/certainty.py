"""Whether a measured speedup is real: the timing evidence of a run, and the call it supports.

The call keeps three things apart: the direction (faster / slower / about the same), the factor
(how much, and whether that figure may be stated) and the reasons for doubt. It is made from the
speedup's interval (interval.py), never from the point estimate alone: faster / slower / about
the same only when the whole interval says so; "can't tell" when it straddles the edge of "about
the same" (pace.SAME_SPEED); "too noisy to tell" when there is no interval or the direction
itself is in doubt. On a busy machine load moves the ratio itself, by up to BIAS_BOUND either
way (and a medians' ratio outside the interval shows the same kind of bias): the direction is
still stated when even that bias leaves the whole interval and the medians' ratio on one side,
and the factor is then said to be rough. A "can't tell" or "too noisy" call states no figure
anywhere (headline, status bar, charts, lessons, reports, Compare).
Results saved before intervals existed carry no evidence and are called from their speedup.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Self, TypeAlias, cast

from pydantic import Field, model_validator

from autocast_explorer.core.documents.field_types import NullableNonNegative, Texts, Whole
from autocast_explorer.core.documents.model import Part
from autocast_explorer.core.experiment.interval import LEVEL, MIN_PAIRS_95, SpeedupInterval
from autocast_explorer.core.experiment.pace import SAME_SPEED, pace, rough_text
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
#: How far other programs can move the measured speedup itself (not only its spread), either
#: way: a disturbed run states a direction only when the whole interval lies beyond it.
#: Measured with bench/load_bias.py and bench/noisy_verdict.py (busy loops beside the run on 2
#: cores, 1 and 2 threads): 3.6× on an AVX2-only AMD EPYC (2 busy loops, 2 threads: 0.586×
#: where quiet runs gave 0.156–0.162×), 3.88× on an Emerald Rapids Xeon (GRU preset, 2
#: threads); the bound covers the worst seen (docs/measurement.md).
BIAS_BOUND = 3.9
#: The calls that grade and headline a speedup; "unclear", "noisy" and "untimed" do not.
GRADED = ("faster", "slower", "same")
#: A verdict's `call` and `direction` as the documents write them.
VerdictCall = Literal["faster", "slower", "same", "can't tell", "too noisy"]
Direction = Literal["faster", "slower", "same"]
#: Each call as the result document's `latency.verdict.call` names it ("untimed": no verdict).
VERDICT_CALLS: dict[str, VerdictCall] = {
    "faster": "faster",
    "slower": "slower",
    "same": "same",
    "unclear": "can't tell",
    "noisy": "too noisy",
}


#: Why timing stopped (TimingEvidence.stopped).
Stopped = Literal["budget", "precise", "max_time"]


class SpeedVerdict(Part):
    """`latency.verdict` (a result's, a sweep point's) and a route's `verdict`: the call the
    window, the CLI and reports make, so a reader need not re-implement the rules."""

    call: VerdictCall
    direction: Annotated[
        Direction | None,
        Field(description="null: not even the direction is certain (can't tell, too noisy)"),
    ] = None
    factor: Annotated[
        NullableNonNegative,
        Field(
            description="the speedup stated (float32 ÷ autocast, as `speedup`); null when no "
            "figure may be stated"
        ),
    ] = None
    reasons: Annotated[
        Texts, Field(description="the reasons for doubt, measured; empty for a firm call")
    ] = ()


class WritesVerdict(Part):
    """Mixed into a part whose document carries its speed call as `verdict` (a WrittenVerdict
    field): written, never read back. A reader calls again from the keys, so a document read
    back equals the one written and a file's call is never trusted over its measurements.

    Each part declares the field itself, last among its own keys and with a description of
    what it is the call of: an inherited field would come first and reorder the published
    schemas and the written JSON."""

    @model_validator(mode="before")
    @classmethod
    def _verdict_not_read(cls, data: Any) -> Any:
        if isinstance(data, dict) and "verdict" in data:
            return {key: value for key, value in data.items() if key != "verdict"}
        return data

    def with_verdict(self, call: SpeedCall) -> Self:
        """This part as its document writes it: with `call`'s verdict (None: not timed)."""
        return self.model_copy(update={"verdict": call.verdict()})


#: A `verdict` field's type (see WritesVerdict); null: not timed, or written before verdicts.
WrittenVerdict: TypeAlias = SpeedVerdict | None


class TimingEvidence(WritesVerdict):
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
    verdict: Annotated[
        WrittenVerdict,
        Field(
            description="the speed call made from these keys (written, never read back: "
            "readers call again); null or absent: not timed, or written before verdicts"
        ),
    ] = None

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
    interval straddles the edge of "about the same": can't tell), "noisy" (too noisy to tell:
    not even the direction is certain) or "untimed".

    `rough` says why the factor of a faster/slower call is uncertain (BUSY, DISAGREE, WIDE)
    and is '' when the figure is firm; `reasons` are the measured reasons for doubt, `advice`
    what would help.
    """

    kind: str
    speedup: float
    interval: SpeedupInterval | None
    reasons: tuple[str, ...] = ()
    advice: tuple[str, ...] = ()
    rough: str = ""

    @property
    def graded(self) -> bool:
        """True when the direction may be stated as a finding (headline, status bar, grades)."""
        return self.kind in GRADED

    @property
    def too_noisy(self) -> bool:
        return self.kind == "noisy"

    @property
    def direction(self) -> Direction | None:
        """ "faster", "slower" or "same" when certain, else None."""
        return cast(Direction, self.kind) if self.graded else None

    @property
    def factor(self) -> float | None:
        """The speedup this call may state; None for can't tell, too noisy or not timed."""
        return self.speedup if self.graded else None

    @property
    def times(self) -> float:
        """How many times faster or slower (≥ 1 in the call's direction): 1 ÷ speedup when
        slower; NaN when no figure may be stated."""
        factor = self.factor
        if factor is None or factor <= 0:
            return math.nan
        return 1 / factor if self.kind == "slower" else factor

    def figure_text(self) -> str:
        """The stated figure in words: '1.72× faster', 'about 7× slower', 'about the same
        speed (1.01×)'; '' when no figure may be stated."""
        if self.kind in ("faster", "slower"):
            if self.rough:
                return f"about {rough_text(self.times)}× {self.kind}"
            return f"{self.times:.2f}× {self.kind}"
        if self.kind == "same":
            return f"about the same speed ({self.speedup:.2f}×)"
        return ""

    def interval_text(self, slower: bool = False) -> str:
        """' (95%: 1.66–1.79)', as slowdown factors when `slower`; '' without an interval and
        for a rough factor (load moved the ratio the interval is about)."""
        if self.interval is None or self.rough:
            return ""
        return f" ({self.interval.slower_text() if slower else self.interval.text()})"

    def verdict(self) -> SpeedVerdict | None:
        """The document's verdict object; None for a run whose autocast side was not timed."""
        if self.kind not in VERDICT_CALLS:
            return None
        return SpeedVerdict(
            call=VERDICT_CALLS[self.kind],
            direction=self.direction,
            factor=self.factor,
            reasons=self.reasons,
        )


def _width_words(interval: SpeedupInterval) -> str:
    """Why a wide interval is too noisy, in words a learner can check: a 95% interval by its
    span; one of lower coverage (under MIN_PAIRS_95 pairs) by how far its few rounds were apart."""
    width = interval.width
    factor = f"{width:.2f}" if width < 10 else f"{width:,.0f}"
    if interval.shown:
        return (
            f"the speedup's {LEVEL:.0%} interval spans a factor of {factor} (over {NOISY_WIDTH:g})"
        )
    return (
        f"only {interval.pairs} paired rounds, and they disagreed by a factor of {factor} "
        f"(more than {NOISY_WIDTH:g})"
    )


def _edge_words(interval: SpeedupInterval) -> str:
    """Which two calls an interval that straddles an edge of "about the same" spans."""
    if interval.high > SAME_SPEED and interval.low < 1 / SAME_SPEED:
        return "slower, about the same and faster"
    if interval.high > SAME_SPEED:
        return "about the same and faster"
    return "slower and about the same"


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
    medians_ratio: float | None = None,
) -> SpeedCall:
    """The call for `speedup` given the run's evidence (None: an old result, called by pace).

    `medians_ratio` (plain median ÷ autocast median: what the bars show; None: `speedup`
    itself) outside the interval, ×SAME_SPEED either side, biases the figure as load does: the
    run then states a direction only when the interval and the medians' ratio both lie beyond
    BIAS_BOUND. `threads` (the run's thread count) feeds the load rule; `iqr_ratios` (IQR ÷
    median per mode) only the reasons. The rules, in order, are docs/measurement.md's table.
    """
    if speedup != speedup:
        return SpeedCall("untimed", speedup, None)
    if evidence is None:
        return SpeedCall(pace(speedup), speedup, None)
    interval = evidence.interval
    shown = speedup if medians_ratio is None else medians_ratio
    off = interval is not None and not (
        interval.low / SAME_SPEED <= shown <= interval.high * SAME_SPEED
    )
    busy = disturbed(evidence, threads)
    reasons = doubt_reasons(evidence, threads, iqr_ratios, off)
    advice = _advice(evidence, threads)
    if interval is None:
        return SpeedCall("noisy", speedup, interval, reasons, advice)
    rough = _rough(busy, off, interval.width > NOISY_WIDTH)
    if rough:
        # Load, or blocks that disagree with the medians, bias the ratio itself: only a
        # direction that the whole 95% interval and the medians' ratio (the bars) both keep
        # beyond BIAS_BOUND is a fact; the factor is then rough.
        bias = 1.0 if rough == WIDE else BIAS_BOUND
        direction = sure_direction(interval, bias)
        if direction is None or interval.level < LEVEL or _beyond(shown, shown, bias) != direction:
            return SpeedCall("noisy", speedup, interval, reasons, advice)
        return SpeedCall(direction, speedup, interval, reasons, advice, rough)
    direction = sure_direction(interval, 1.0)
    if direction is None and interval.low >= 1 / SAME_SPEED and interval.high <= SAME_SPEED:
        direction = "same"
    if direction is None:
        # Of lower coverage (under MIN_PAIRS_95 pairs) it is no interval: its rounds are named.
        spread = (
            "interval spans" if interval.shown else f"{interval.pairs} paired rounds range over"
        )
        straddle = (
            f"the {spread} {_edge_words(interval)} (about the same = within {SAME_SPEED - 1:.0%})"
        )
        return SpeedCall("unclear", speedup, interval, (straddle,))
    return SpeedCall(direction, speedup, interval)


#: Why a stated factor is rough (SpeedCall.rough), most telling first.
BUSY = "the machine was busy"
DISAGREE = "the medians and the paired blocks disagreed"
WIDE = "the paired timings varied widely"


def _rough(busy: bool, off: bool, wide: bool) -> str:
    """Why a direction needs the bias rule (and its factor is rough); '' for a firm call."""
    if busy:
        return BUSY
    if off:
        return DISAGREE
    return WIDE if wide else ""


def sure_direction(interval: SpeedupInterval, bias: float) -> str | None:
    """ "faster" or "slower" when the whole interval stays beyond "about the same" even if the
    ratio was moved by `bias` (≥ 1) either way; else None."""
    return _beyond(interval.low, interval.high, bias)


def _beyond(low: float, high: float, bias: float) -> str | None:
    """ "faster" when low ÷ bias ≥ SAME_SPEED, "slower" when high × bias ≤ 1 ÷ SAME_SPEED."""
    if low / bias >= SAME_SPEED:
        return "faster"
    if high * bias <= 1 / SAME_SPEED:
        return "slower"
    return None


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


def doubt_reasons(
    evidence: TimingEvidence,
    threads: int | None = None,
    iqr_ratios: tuple[float, ...] = (),
    off: bool = False,
) -> tuple[str, ...]:
    """The measured reasons to doubt a run's figure, each only where it applies."""
    interval = evidence.interval
    reasons: list[str] = []
    if interval is None:
        reasons.append("too few paired blocks survived to give an interval")
    elif interval.width > NOISY_WIDTH:
        reasons.append(_width_words(interval))
    if off and interval is not None:
        where = (
            "the paired blocks' interval"
            if interval.shown
            else f"the range of the {interval.pairs} paired rounds"
        )
        reasons.append(f"the ratio of the medians lies outside {where}")
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
    if disturbed(evidence, threads):
        reasons.append(f"other programs can move the ratio itself up to {BIAS_BOUND:g}× either way")
    if load is not None and load.freq_changed:
        reasons.append(load.freq_text())
    worst = max((r for r in iqr_ratios if math.isfinite(r)), default=0.0)
    if worst >= 0.10:
        reasons.append(f"blocks of one mode varied by an IQR of {worst:.0%} of its median")
    return tuple(reasons)


def _advice(evidence: TimingEvidence, threads: int | None) -> tuple[str, ...]:
    """What would help a doubtful run: fewer threads, fewer other programs, more time."""
    load = evidence.load
    busy = load.other_cores if load is not None else None
    advice: list[str] = []
    cores = load.cores if load is not None else None
    if threads is not None and cores is not None and (threads >= cores or busy):
        free = max(1, math.floor((load.free_cores if load else cores) or 1))
        if threads > free or threads >= cores:
            advice.append(f"fewer threads than cores ({min(free, max(threads - 1, 1))} here)")
    advice.append("closing other programs")
    if evidence.stopped == "max_time":
        advice.append("a longer maximum time")
    return tuple(advice)

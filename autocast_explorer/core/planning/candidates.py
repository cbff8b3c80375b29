"""The search for a measured precision plan, within a time budget.

1. Keep-sets: for each lower dtype, eager autocast keeping the user's own layers (`Space.kept`,
   kept in every lower-precision candidate) is judged; while it misses the criterion the worst
   row left in the sensitivity ranking is kept in float32 too and the forward judged again;
   once it meets it, each row added but the last is tried without (one that is not needed is
   dropped; the user's are never dropped). Keeping every row would be float32: that ends the
   growth.
2. Candidates at the run's threads, in the routes' order (eager, compiled, implicit), float32
   before the lower dtypes: each judged (a compiled one compiles first, when its forecast fits
   the budget left) and, when it meets the criterion, timed against plain float32 eager with
   the paired protocol, its share of the budget left split evenly over what is still to time.
3. Threads: the fastest so far, and the fastest float32 choice, at every other thread count
   from 1 to the free cores.

The budget is the search's clock to the deadline, whatever spent it (budget.py): a compile
starts only when COMPILE_MARGIN × its forecast and a timing after it fit what is left, and a
timing is given its share divided by how far timings of its kind ran past theirs so far.

A candidate replaces the one it is compared with only when its speedup's whole 95% interval
lies above the other's (in the order tried: the simpler choice stays on a tie); plain float32
eager is the first, its speedup 1 by definition. The outcome: "plan" when a lower precision
wins; "float32" when a lower one met the criterion but none beat float32 (chosen: the fastest
float32 choice); "none" when no lower precision met it (chosen: the closest).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from autocast_explorer.core.experiment.interval import SpeedupInterval
from autocast_explorer.core.experiment.layer_patterns import within
from autocast_explorer.core.planning.bench import Bench, CandidateFailed
from autocast_explorer.core.planning.budget import COMPILE_MARGIN, Overruns
from autocast_explorer.core.planning.choice import FLOAT32, Choice
from autocast_explorer.core.planning.criterion import Criterion
from autocast_explorer.core.planning.document import Outcome
from autocast_explorer.core.planning.judge import NOT_MEASURED, Measured
from autocast_explorer.core.planning.ranking import badness
from autocast_explorer.core.runtime.progress import Reporter

#: The least time a candidate's timing is given (half a second a side: enough paired blocks for
#: a 95% interval on a busy machine), or this many float32 forwards when that is longer.
MIN_TIMING_S = 1.0
FORWARDS_PER_TIMING = 16
#: Why a keep-set that lowers nothing that matters is no plan.
FLOAT32_AFTER_ALL = "float32 after all: with these kept the answers are float32's, bit for bit"
#: Why a lowered candidate whose answers were float32's bit for bit is no lower precision.
SAME_AS_FLOAT32 = "the same as float32 eager: its answers were float32's, bit for bit"
#: float32 eager against itself.
UNIT = SpeedupInterval(low=1.0, high=1.0, level=0.95, pairs=0, estimate=1.0)


@dataclass
class Tried:
    """A candidate as far as the search took it: judged (`measured`), timed (`interval`), or
    stopped on the way (`stopped` says why: the budget, a failure, more layers kept than
    needed)."""

    choice: Choice
    measured: Measured | None = None
    interval: SpeedupInterval | None = None
    stopped: str = ""

    def met(self, criterion: Criterion) -> bool:
        return self.measured is not None and self.measured.met(criterion)

    @property
    def lowers(self) -> bool:
        """A lower precision that changed the answers (one that left them float32's, bit for
        bit — oneDNN's setting on a CPU without bf16 maths — counts as float32)."""
        identical = self.measured is not None and self.measured.identical
        return self.choice.lowered and not identical


def beats(a: SpeedupInterval | None, b: SpeedupInterval | None) -> bool:
    """Whether a's whole 95% interval lies above b's (a 95% interval only: fewer pairs never
    beat anything)."""
    if a is None or b is None or not a.shown:
        return False
    return a.low > b.high


@dataclass(frozen=True)
class Found:
    """The search's answer: the outcome, the chosen candidate, and every candidate tried."""

    outcome: Outcome
    chosen: Tried
    tried: tuple[Tried, ...]
    winner: Tried  # the fastest that met the criterion (the chosen one unless outcome "none")


@dataclass
class Space:
    """What the search ranges over: `base` is plain float32 eager at the run's threads; `kept`
    the module paths the user keeps in float32 (in every lower-precision candidate)."""

    base: Choice
    routes: Sequence[str]
    dtypes: Sequence[str]
    threads: Sequence[int]
    rankings: dict[str, Sequence[str]]
    rows: Sequence[str]
    kept: tuple[str, ...] = ()

    def all_kept(self, keep: Sequence[str]) -> bool:
        """Whether `keep` covers every row (then nothing that matters is lowered)."""
        return all(within(row, keep) for row in self.rows)


class Search:
    """One search (module docstring) on `bench`, until `deadline` on `clock`."""

    def __init__(
        self,
        bench: Bench,
        criterion: Criterion,
        space: Space,
        deadline: float,
        clock: Callable[[], float],
        reporter: Reporter,
    ) -> None:
        self.bench = bench
        self.criterion = criterion
        self.space = space
        self.deadline = deadline
        self.clock = clock
        self.reporter = reporter
        self.tried: dict[Choice, Tried] = {}
        self.keep_sets: dict[str, Tried] = {}
        self.overruns = Overruns()

    # ---- the steps -------------------------------------------------------------------------
    def run(self) -> Found:
        base = self._record(self.space.base)
        base.measured = self.bench.judge(base.choice)
        base.interval = UNIT
        for index, dtype in enumerate(self.space.dtypes):
            self.reporter.report(0.05 * index, f"growing the float32 keep-set for {dtype}")
            self._grow(dtype)
        queue = self._precision_queue()
        later = len(self.space.threads) * 2
        for index, choice in enumerate(queue):
            self.reporter.check()
            self._try(choice, len(queue) - index + later, 0.1 + 0.6 * index / len(queue))
        variants = self._thread_variants()
        for index, choice in enumerate(variants):
            self.reporter.check()
            self._try(choice, len(variants) - index, 0.7 + 0.3 * index / max(len(variants), 1))
        self.reporter.report(1.0, "deciding")
        return decide(tuple(self.tried.values()), base, self.criterion)

    def _record(self, choice: Choice) -> Tried:
        found = self.tried.get(choice)
        if found is None:
            found = self.tried[choice] = Tried(choice)
        return found

    def _judge(self, tried: Tried) -> None:
        """Judge once; a candidate that cannot run measures nothing and says why."""
        if tried.measured is not None or tried.stopped:
            return
        self.reporter.check()
        try:
            tried.measured = self.bench.judge(tried.choice)
        except CandidateFailed as exc:
            tried.measured, tried.stopped = NOT_MEASURED, f"failed here: {exc}"

    def _grow(self, dtype: str) -> None:
        """Step 1 for `dtype`: the smallest keep-set found that meets the criterion, if any."""
        base, kept = self.space.base, self.space.kept
        ranking = [
            row for row in self.space.rankings.get(dtype, self.space.rows) if not within(row, kept)
        ]
        keep = kept
        current = self._record(Choice("eager", dtype, base.threads, kept))
        self._judge(current)
        while not current.met(self.criterion) and ranking:
            if self.clock() >= self.deadline:
                current.stopped = current.stopped or "the budget ran out while growing the keep-set"
                return
            keep = (*keep, ranking.pop(0))
            if self.space.all_kept(keep):
                return  # every row kept is float32, not a lower precision

            current = self._record(current.choice.with_keep(keep))
            self._judge(current)
            if current.measured is not None and current.measured.identical:
                current.stopped = FLOAT32_AFTER_ALL
                return
        if not current.met(self.criterion):
            return
        for row in keep[len(kept) : -1]:
            if self.clock() >= self.deadline:
                break
            smaller = self._record(current.choice.with_keep(tuple(r for r in keep if r != row)))
            self._judge(smaller)
            if smaller.met(self.criterion):
                current.stopped = "keeps a layer more than needed"
                keep, current = smaller.choice.keep, smaller
        self.keep_sets[dtype] = current

    def _precision_queue(self) -> list[Choice]:
        """Step 2's candidates, in the order they are tried."""
        base = self.space.base
        queue: list[Choice] = []
        for route in self.space.routes:
            if route == "implicit":
                queue.append(Choice(route, "bfloat16", base.threads, self.space.kept))
                continue
            if route != base.route:
                queue.append(Choice(route, FLOAT32, base.threads))
            for dtype in self.space.dtypes:
                grown = self.keep_sets.get(dtype)
                if grown is not None:
                    queue.append(Choice(route, dtype, base.threads, grown.choice.keep))
        return queue

    def _thread_variants(self) -> list[Choice]:
        """Step 3's candidates: the leaders so far at every other thread count."""
        found = decide(tuple(self.tried.values()), self.tried[self.space.base], self.criterion)
        leaders = [found.winner.choice]
        fastest_float32 = _fastest([t for t in self.tried.values() if not t.lowers], self.criterion)
        if fastest_float32.choice not in leaders:
            leaders.append(fastest_float32.choice)
        return [
            leader.with_threads(threads)
            for leader in leaders
            for threads in self.space.threads
            if threads != leader.threads
        ]

    def _switching(self, choice: Choice) -> bool:
        return choice.threads != self.space.base.threads

    def _allowance(self, setup: float, jobs: int, switching: bool) -> float | None:
        """Seconds for the next timing: the budget left after `setup` (a compile's forecast,
        COMPILE_MARGIN times), shared by the `jobs` still to time and divided by how far such
        timings overran; None when not even the least a timing needs fits."""
        floor = max(MIN_TIMING_S, FORWARDS_PER_TIMING * self.bench.forward_s)
        factor = self.overruns.factor(switching)
        left = self.deadline - self.clock() - COMPILE_MARGIN * setup
        if left < floor * factor:
            return None
        return max(left / max(jobs, 1) / factor, floor)

    def _try(self, choice: Choice, jobs: int, at: float) -> None:
        """Judge `choice` when its setup fits the budget, and time it when it meets the
        criterion."""
        tried = self._record(choice)
        if tried.interval is not None or tried.stopped:
            return
        setup = self.bench.setup_s(choice)
        switching = self._switching(choice)
        if self._allowance(setup, jobs, switching) is None:
            left = max(self.deadline - self.clock(), 0.0)
            tried.stopped = (
                f"not tried: compiling (about {setup:.0f} s, {COMPILE_MARGIN:g}× that to be "
                f"safe) and timing it would pass the budget ({left:.0f} s left)"
                if setup > 0
                else "not tried: the budget was spent"
            )
            return
        self.reporter.report(at, f"judging {choice.label()}")
        self._judge(tried)
        if not tried.met(self.criterion):
            return
        self.reporter.check()
        seconds = self._allowance(0.0, jobs, switching)
        if seconds is None:
            tried.stopped = "not timed: the budget was spent"
            return
        self.reporter.report(at, f"timing {choice.label()} against float32 eager")
        start = self.clock()
        tried.interval = self.bench.time(choice, seconds, self.reporter.span(at, at + 0.05))
        self.overruns.record(switching, seconds, self.clock() - start)


def _fastest(candidates: Sequence[Tried], criterion: Criterion) -> Tried:
    """The first of `candidates` (met, or the first) until another's interval beats it."""
    leader = candidates[0]
    for tried in candidates[1:]:
        if tried.met(criterion) and beats(tried.interval, leader.interval):
            leader = tried
    return leader


def _closest(candidates: Sequence[Tried], criterion: Criterion) -> Tried | None:
    """The judged lower-precision candidate nearest to meeting the criterion."""
    judged = [t for t in candidates if t.lowers and t.measured is not None]
    if not judged:
        return None
    return min(judged, key=lambda t: badness(criterion, t.measured.value if t.measured else None))


def decide(tried: tuple[Tried, ...], base: Tried, criterion: Criterion) -> Found:
    """The outcome from every candidate tried (module docstring)."""
    ordered = (base, *(t for t in tried if t is not base))
    winner = _fastest(ordered, criterion)
    if winner.lowers:
        return Found("plan", winner, tried, winner)
    if any(t.lowers and t.met(criterion) for t in tried):
        return Found("float32", winner, tried, winner)
    return Found("none", _closest(tried, criterion) or base, tried, winner)


def shortfall(criterion: Criterion, measured: Measured) -> str:
    """'agree 97.66% misses agree>=99.5%' (the interval too, where there is one)."""
    name = criterion.measure
    unit = {"agree": "%", "sqnr": " dB", "accuracy-drop": " points"}[name]
    if math.isnan(measured.value):
        return f"{name} not measured: the output was not finite, or the forward raised"
    words = f"{name} {measured.value:.4g}{unit}"
    if measured.low is not None and measured.high is not None:
        words += f" (95%: {measured.low:.3g} to {measured.high:.3g})"
    return f"{words} misses {criterion}"


def why_not(tried: Tried, found: Found, criterion: Criterion) -> str:
    """Why a candidate is not the plan ('' for the chosen one and the winner). A lowered one
    whose answers were float32's bit for bit says so first: it is float32 after all."""
    if tried is found.chosen and found.outcome != "none":
        return ""
    if tried.stopped:
        return tried.stopped
    if tried.measured is not None and not tried.met(criterion):
        return shortfall(criterion, tried.measured)
    speed = "" if tried is found.winner else _slower_words(tried, found)
    if tried.choice.lowered and not tried.lowers:
        return f"{SAME_AS_FLOAT32}; {speed}" if speed else SAME_AS_FLOAT32
    return speed


def _slower_words(tried: Tried, found: Found) -> str:
    """How a candidate's speedup compares with the winner's."""
    interval, best = tried.interval, found.winner
    if interval is None:
        return "timed, but fewer than 2 paired rounds: no interval"
    if not interval.shown:
        return f"timed, but {interval.too_few_text()}"
    own, against = _interval_words(interval), _interval_words(best.interval)
    if beats(best.interval, interval):
        return f"slower than {best.choice.label()}: {own} against {against}"
    return (
        f"not clearly faster than {best.choice.label()} ({own} against {against}): "
        "on a tie the simpler choice stays"
    )


def _interval_words(interval: SpeedupInterval | None) -> str:
    if interval is None or interval.pairs == 0:
        return "1× (float32 eager itself)"
    return interval.text()

"""The plan's search on a fake bench and a fake clock: what it judges, times, keeps and decides,
within its budget, and how soon it stops when cancelled. Nothing here is timed for real."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

from autocast_explorer.core.experiment.interval import SpeedupInterval
from autocast_explorer.core.planning.bench import CandidateFailed
from autocast_explorer.core.planning.candidates import Found, Search, Space, beats, why_not
from autocast_explorer.core.planning.choice import Choice
from autocast_explorer.core.planning.criterion import parse_criterion
from autocast_explorer.core.planning.judge import Measured
from autocast_explorer.core.runtime.progress import Cancelled, Reporter

AGREE = parse_criterion("agree>=99%")
ROWS = ("a", "b", "c")


@dataclass
class FakeClock:
    now: float = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class FakeBench:
    """Answers and speedups decided by the test; every call moves the fake clock."""

    clock: FakeClock
    value: Callable[[Choice], float]
    speedup: Callable[[Choice], tuple[float, float]]
    judge_s: float = 0.1
    compile_s: float = 5.0
    forward_s: float = 0.001
    judged: list[Choice] = field(default_factory=list)
    timed: list[tuple[Choice, float]] = field(default_factory=list)
    compiled: set[tuple[str, str, tuple[str, ...]]] = field(default_factory=set)
    on_judge: Callable[[Choice], None] = lambda choice: None

    def judge(self, choice: Choice) -> Measured:
        self.judged.append(choice)
        self.on_judge(choice)
        self.clock.now += self.judge_s + self.setup_s(choice)
        self.compiled.add((choice.route, choice.dtype, choice.keep))
        value = self.value(choice)
        if value < 0:
            raise CandidateFailed("no C++ compiler")
        return Measured(value)

    def setup_s(self, choice: Choice) -> float:
        fresh = (choice.route, choice.dtype, choice.keep) not in self.compiled
        return self.compile_s if choice.route == "compiled" and fresh else 0.0

    def time(self, choice: Choice, seconds: float, reporter: Reporter) -> SpeedupInterval | None:
        self.timed.append((choice, seconds))
        self.clock.now += seconds
        low, high = self.speedup(choice)
        return SpeedupInterval(
            low=low, high=high, level=0.95, pairs=20, estimate=math.sqrt(low * high)
        )

    def release(self) -> None:
        pass


def _search(
    bench: FakeBench,
    budget: float = 60.0,
    routes: tuple[str, ...] = ("eager", "compiled"),
    dtypes: tuple[str, ...] = ("bfloat16",),
    threads: tuple[int, ...] = (2,),
    ranking: tuple[str, ...] = ("b", "a", "c"),
    cancel: Callable[[], bool] | None = None,
) -> Found:
    space = Space(
        base=Choice("eager", "float32", 2),
        routes=routes,
        dtypes=dtypes,
        threads=threads,
        rankings=dict.fromkeys(dtypes, ranking),
        rows=ROWS,
    )
    reporter = Reporter(cancel=cancel)
    return Search(bench, AGREE, space, bench.clock.now + budget, bench.clock, reporter).run()


def _needs_b(choice: Choice) -> float:
    """Lowered, the answers agree only with row b kept in float32."""
    return 100.0 if not choice.lowered or "b" in choice.keep else 90.0


def _tried(found: Found, choice: Choice) -> tuple[Measured | None, SpeedupInterval | None, str]:
    for tried in found.tried:
        if tried.choice == choice:
            return tried.measured, tried.interval, why_not(tried, found, AGREE)
    raise AssertionError(f"{choice} was not tried")


def test_a_plan_keeps_the_worst_row_and_wins_when_its_interval_clears_float32() -> None:
    def speedup(choice: Choice) -> tuple[float, float]:
        return (1.3, 1.5) if choice.route == "eager" else (0.8, 0.9)

    found = _search(FakeBench(FakeClock(), _needs_b, speedup))
    assert found.outcome == "plan"
    assert found.chosen.choice == Choice("eager", "bfloat16", 2, ("b",))
    assert (found.chosen.interval.low, found.chosen.interval.high) == (1.3, 1.5)
    measured, interval, why = _tried(found, Choice("eager", "bfloat16", 2))
    assert measured == Measured(90.0) and interval is None
    assert why == "agree 90% misses agree>=99%"
    _m, _i, why = _tried(found, Choice("compiled", "float32", 2))
    assert why == (
        "slower than eager bfloat16, 2 threads, 1 layer kept in float32: 95%: 0.80–0.90 "
        "against 95%: 1.30–1.50"
    )


def test_a_layer_kept_on_the_way_but_not_needed_is_dropped() -> None:
    bench = FakeBench(FakeClock(), _needs_b, lambda choice: (1.3, 1.5))
    found = _search(bench, routes=("eager",), ranking=("a", "b", "c"))
    keeps = [c.keep for c in bench.judged if c.dtype == "bfloat16"]
    assert keeps[:4] == [(), ("a",), ("a", "b"), ("b",)]
    assert found.chosen.choice.keep == ("b",)
    _m, _i, why = _tried(found, Choice("eager", "bfloat16", 2, ("a", "b")))
    assert why == "keeps a layer more than needed"


def test_float32_is_fastest_when_no_lower_precision_beats_compiled_float32() -> None:
    def speedup(choice: Choice) -> tuple[float, float]:
        if choice.route == "compiled" and not choice.lowered:
            return (2.3, 2.6)
        return (0.5, 0.6)

    found = _search(FakeBench(FakeClock(), _needs_b, speedup))
    assert found.outcome == "float32"
    assert found.chosen.choice == Choice("compiled", "float32", 2)
    _m, interval, why = _tried(found, Choice("eager", "bfloat16", 2, ("b",)))
    assert interval is not None and interval.low == 0.5
    assert why.startswith("slower than compiled float32, 2 threads: 95%: 0.50–0.60 against")


def test_float32_eager_stays_when_every_candidate_is_slower() -> None:
    found = _search(FakeBench(FakeClock(), _needs_b, lambda choice: (0.2, 0.3)))
    assert found.outcome == "float32"
    assert found.chosen.choice == Choice("eager", "float32", 2)
    assert why_not(found.chosen, found, AGREE) == ""


def test_nothing_meets_the_criterion_and_the_closest_is_chosen() -> None:
    def value(choice: Choice) -> float:
        if not choice.lowered:
            return 100.0
        return 97.0 if choice.dtype == "float16" else 90.0 + len(choice.keep)

    bench = FakeBench(FakeClock(), value, lambda choice: (1.5, 1.6))
    found = _search(bench, dtypes=("bfloat16", "float16"), routes=("eager",))
    assert found.outcome == "none"
    assert found.chosen.choice == Choice("eager", "float16", 2)
    assert found.chosen.measured == Measured(97.0)
    # keeping every row would be float32: the growth stops before it
    assert max(len(c.keep) for c in bench.judged) == len(ROWS) - 1
    assert not any(choice.lowered for choice, _seconds in bench.timed)


def test_on_overlapping_intervals_the_simpler_choice_stays() -> None:
    def speedup(choice: Choice) -> tuple[float, float]:
        return (1.3, 1.7) if choice.route == "compiled" else (1.2, 1.6)

    found = _search(FakeBench(FakeClock(), _needs_b, speedup))
    assert found.chosen.choice == Choice("eager", "bfloat16", 2, ("b",))
    _m, _i, why = _tried(found, Choice("compiled", "bfloat16", 2, ("b",)))
    assert why.startswith("not clearly faster than eager bfloat16")
    assert why.endswith("on a tie the simpler choice stays")


def test_threads_are_tried_for_the_leaders_and_can_win() -> None:
    def speedup(choice: Choice) -> tuple[float, float]:
        if choice.threads == 1:
            return (3.0, 3.2) if choice.lowered else (1.1, 1.2)
        return (1.3, 1.5) if choice.lowered else (0.9, 1.1)

    bench = FakeBench(FakeClock(), _needs_b, speedup)
    found = _search(bench, routes=("eager",), threads=(1, 2))
    timed = [choice for choice, _seconds in bench.timed]
    assert Choice("eager", "bfloat16", 1, ("b",)) in timed
    assert Choice("eager", "float32", 1) in timed
    assert found.chosen.choice == Choice("eager", "bfloat16", 1, ("b",))


def test_a_compile_that_does_not_fit_the_budget_is_not_started() -> None:
    bench = FakeBench(FakeClock(), _needs_b, lambda choice: (1.3, 1.5), compile_s=50.0)
    found = _search(bench, budget=20.0)
    assert not any(choice.route == "compiled" for choice in bench.judged)
    _m, _i, why = _tried(found, Choice("compiled", "float32", 2))
    assert why.startswith("not tried: compiling (about 50 s, 1.5× that to be safe) and timing")
    assert bench.clock.now <= 20.0 * 1.3


def test_the_search_keeps_to_its_budget() -> None:
    bench = FakeBench(FakeClock(), _needs_b, lambda choice: (1.3, 1.5), judge_s=0.5)
    _search(bench, budget=10.0, dtypes=("bfloat16", "float16"), threads=(1, 2, 4))
    assert bench.clock.now <= 10.0 * 1.3
    assert all(seconds >= 1.0 for _choice, seconds in bench.timed)


def test_a_candidate_that_fails_says_why_and_the_search_goes_on() -> None:
    def value(choice: Choice) -> float:
        return -1.0 if choice.route == "compiled" else _needs_b(choice)

    found = _search(FakeBench(FakeClock(), value, lambda choice: (1.3, 1.5)))
    assert found.outcome == "plan"
    _m, _i, why = _tried(found, Choice("compiled", "float32", 2))
    assert why == "failed here: no C++ compiler"


def test_a_cancel_stops_the_search_within_one_candidate() -> None:
    asked = []

    def cancel_on_third(choice: Choice) -> None:
        if len(bench.judged) == 3:
            asked.append(choice)

    bench = FakeBench(FakeClock(), _needs_b, lambda choice: (1.3, 1.5), on_judge=cancel_on_third)
    with pytest.raises(Cancelled):
        _search(bench, cancel=lambda: bool(asked))
    assert len(bench.judged) == 3
    assert bench.timed == []


def test_only_a_whole_95_percent_interval_beats_another() -> None:
    low = SpeedupInterval(low=1.0, high=1.2, level=0.95, pairs=20, estimate=1.1)
    high = SpeedupInterval(low=1.25, high=1.4, level=0.95, pairs=20, estimate=1.3)
    few = SpeedupInterval(low=1.25, high=1.4, level=0.75, pairs=3, estimate=1.3)
    assert beats(high, low) and not beats(low, high)
    assert not beats(few, low)


@dataclass
class BusyBench(FakeBench):
    """A busy machine's bench, its forwards slow: a timing at another thread count than the
    baseline's pays a thread switch and one untimed forward before every block, on each side
    (twice the seconds it is given, and its warm-up); a compile takes twice its forecast."""

    base_threads: int = 2
    compile_forecast_s: float = 3.0

    def setup_s(self, choice: Choice) -> float:
        fresh = (choice.route, choice.dtype, choice.keep) not in self.compiled
        return self.compile_forecast_s if choice.route == "compiled" and fresh else 0.0

    def judge(self, choice: Choice) -> Measured:
        self.clock.now += self.setup_s(choice)  # the compile's second half, unforecast
        return super().judge(choice)

    def time(self, choice: Choice, seconds: float, reporter: Reporter) -> SpeedupInterval | None:
        interval = super().time(choice, seconds, reporter)
        switching = choice.threads != self.base_threads
        self.clock.now += seconds * (1.0 if switching else 0.1) + 0.3
        return interval


def _misses_lowered(choice: Choice) -> float:
    """Nothing lowered meets the criterion: only float32 is timed, then at one other count."""
    return 90.0 if choice.lowered else 100.0


@pytest.mark.parametrize("budget", [10.0, 20.0, 60.0, 300.0])
@pytest.mark.parametrize(
    ("value", "routes", "threads"),
    [
        (_misses_lowered, ("eager",), (1, 2)),
        (_needs_b, ("eager", "compiled", "implicit"), (1, 2, 4, 8)),
    ],
    ids=["one-timing-at-another-count", "every-route"],
)
def test_the_whole_plan_keeps_within_1_3_budgets_on_a_busy_machine(
    budget: float,
    value: Callable[[Choice], float],
    routes: tuple[str, ...],
    threads: tuple[int, ...],
) -> None:
    """The budget began before the search: building the model and the locator spent 30%."""
    clock = FakeClock(now=0.3 * budget)
    bench = BusyBench(clock, value, lambda choice: (1.3, 1.5), judge_s=0.2)
    space = Space(
        base=Choice("eager", "float32", 2),
        routes=routes,
        dtypes=("bfloat16", "float16"),
        threads=threads,
        rankings={"bfloat16": ("b", "a", "c"), "float16": ("b", "a", "c")},
        rows=ROWS,
    )
    Search(bench, AGREE, space, budget, clock, Reporter()).run()
    assert clock.now <= 1.3 * budget
    assert any(choice.threads != 2 for choice, _seconds in bench.timed)  # it timed, not gave up


def test_the_user_s_keep_set_is_in_every_lower_candidate_and_the_search_adds_to_it() -> None:
    """The user keeps `a`; the answers agree only once `b` is kept too."""
    bench = FakeBench(FakeClock(), _needs_b, lambda choice: (1.3, 1.5))
    space = Space(
        base=Choice("eager", "float32", 2),
        routes=("eager", "implicit"),
        dtypes=("bfloat16",),
        threads=(2,),
        rankings={"bfloat16": ("a", "c", "b", "d")},
        rows=(*ROWS, "d"),
        kept=("a",),
    )
    found = Search(bench, AGREE, space, 60.0, bench.clock, Reporter()).run()
    lowered = [choice.keep for choice in bench.judged if choice.lowered]
    assert lowered[:4] == [("a",), ("a", "c"), ("a", "c", "b"), ("a", "b")]
    assert all(keep[0] == "a" for keep in lowered)  # never dropped, never added twice
    assert Choice("implicit", "bfloat16", 2, ("a",)) in bench.judged
    assert found.outcome == "plan"
    assert found.chosen.choice == Choice("eager", "bfloat16", 2, ("a", "b"))


def test_keeping_what_the_user_keeps_and_every_other_row_is_not_a_lower_precision() -> None:
    bench = FakeBench(FakeClock(), _misses_lowered, lambda choice: (1.0, 1.0))
    space = Space(
        base=Choice("eager", "float32", 2),
        routes=("eager",),
        dtypes=("bfloat16",),
        threads=(2,),
        rankings={"bfloat16": ("c", "b", "a")},
        rows=ROWS,
        kept=("a", "b"),
    )
    found = Search(bench, AGREE, space, 60.0, bench.clock, Reporter()).run()
    assert [c.keep for c in bench.judged if c.lowered] == [("a", "b")]  # + c would be all rows
    assert found.outcome == "none" and found.chosen.choice.keep == ("a", "b")


@dataclass
class UnchangedImplicitBench(FakeBench):
    """The implicit route changes no answer here (no bf16 maths on this CPU)."""

    def judge(self, choice: Choice) -> Measured:
        measured = super().judge(choice)
        identical = choice.route == "implicit" or not choice.lowered
        return Measured(measured.value, identical=identical)


def test_a_candidate_whose_answers_are_float32_s_bit_for_bit_says_so() -> None:
    def speedup(choice: Choice) -> tuple[float, float]:
        return (0.998, 1.003) if choice.route == "implicit" else (0.5, 0.6)

    bench = UnchangedImplicitBench(FakeClock(), lambda choice: 100.0, speedup)
    found = _search(bench, routes=("eager", "implicit"))
    assert found.outcome == "float32"  # an unchanged implicit route is no lower precision
    assert found.chosen.choice == Choice("eager", "float32", 2)
    _m, interval, why = _tried(found, Choice("implicit", "bfloat16", 2))
    assert interval is not None
    assert why == (
        "the same as float32 eager: its answers were float32's, bit for bit; not clearly faster "
        "than eager float32, 2 threads (95%: 0.998–1.003 against 1× (float32 eager itself)): "
        "on a tie the simpler choice stays"
    )

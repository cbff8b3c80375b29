"""`make_plan`: a measured precision plan for one config on this CPU, within a time budget.

The model is built as a run builds it (trained first on real data); the locator measures every
row (sensitivity.py); the search (candidates.py) grows the float32 keep-sets and times the
candidates on the real model (bench.py); the document holds all of it and the snippet
(snippet.py). The budget covers everything from when the user asked (`started`): building,
the locator, compiles, thread switches and timings (budget.py); the search stops starting new
work once it is spent, and sizes each timing by how far those of its kind ran past theirs.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import time
from collections.abc import Callable, Sequence

import torch

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families.user.guard import user_phase
from autocast_explorer.core.experiment.interval import SpeedupInterval as Interval
from autocast_explorer.core.experiment.pace import bounds_text, ratio_text
from autocast_explorer.core.experiment.route_kinds import route_names
from autocast_explorer.core.hardware.cpu import environment
from autocast_explorer.core.hardware.load import LoadMeter
from autocast_explorer.core.planning.bench import LiveBench, forward_seconds
from autocast_explorer.core.planning.budget import Budget
from autocast_explorer.core.planning.candidates import Found, Search, Space, Tried, why_not
from autocast_explorer.core.planning.choice import FLOAT32, Choice
from autocast_explorer.core.planning.criterion import Criterion, parse_criterion
from autocast_explorer.core.planning.document import (
    SCHEMA,
    PlanChoice,
    PlanDocument,
    PlanFlips,
    SensitivityRow,
    SpeedupInterval,
)
from autocast_explorer.core.planning.judge import Judge
from autocast_explorer.core.planning.memory import memory_mb
from autocast_explorer.core.planning.sensitivity import (
    first_divergent,
    judge_for,
    measure_rows,
    ranked,
    sensitivity_rows,
)
from autocast_explorer.core.planning.snippet import plan_snippet
from autocast_explorer.core.planning.subject import Subject, prepare_subject
from autocast_explorer.core.planning.words import flips_text
from autocast_explorer.core.runtime.autocast import TORCH_DTYPES
from autocast_explorer.core.runtime.dtypes import DTYPES
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.core.runtime.progress import CancelFn, ProgressFn, Reporter
from autocast_explorer.core.runtime.threads import torch_threads

#: The most a plan may be given (an hour); the least is anything above 0.
MAX_BUDGET_S = 3600.0
#: The other dtype's one-in ranking is measured only while this share of the budget is left.
OTHER_RANKING_SHARE = 0.5


def thread_counts(free: int) -> tuple[int, ...]:
    """1, 2, 4, … up to `free`, and `free` itself: the thread counts the search tries."""
    counts = {free}
    count = 1
    while count < free:
        counts.add(count)
        count *= 2
    return tuple(sorted(counts))


def free_cores(meter: LoadMeter) -> int:
    """The cores other programs left free while `meter` ran (all of them where unreadable)."""
    cores = os.cpu_count() or 1
    free = meter.stop().free_cores
    return cores if free is None else max(1, min(cores, math.floor(free + 0.5)))


def check_request(
    config: ExperimentConfig, criterion: Criterion, budget_s: float, routes: Sequence[str]
) -> None:
    """ConfigError for what no plan can be made of (before anything is built)."""
    if criterion.needs_data and config.data == "synthetic":
        raise ConfigError(
            "criterion", f"{criterion.measure} needs real data (--data digits or a file of yours)"
        )
    if config.mode == "train":
        raise ConfigError("mode", "a plan measures inference: use mode infer")
    if not (isinstance(budget_s, int | float) and 0 < budget_s <= MAX_BUDGET_S):
        raise ConfigError("budget", f"must be seconds above 0 and at most {MAX_BUDGET_S:g}")
    known = route_names()
    unknown = [route for route in routes if route not in known]
    if unknown or known[0] not in routes:
        raise ConfigError("routes", f"must be some of {', '.join(known)}, {known[0]} among them")


def _rankings(
    subject: Subject,
    judge: Judge,
    sensitivity: Sequence[SensitivityRow],
    dtypes: Sequence[str],
    budget: Budget,
    reporter: Reporter,
) -> dict[str, Sequence[str]]:
    """Each dtype's rows worst first: the locator's for the run's dtype; the other's from its
    own one-in measures while half the budget is left (else the run's dtype's ranking)."""
    first = [row.name for row in ranked(sensitivity, judge.criterion)]
    rankings: dict[str, Sequence[str]] = {dtypes[0]: first}
    for dtype in dtypes[1:]:
        if budget.share_left() < OTHER_RANKING_SHARE:
            rankings[dtype] = first
            continue
        found = measure_rows(subject, judge, TORCH_DTYPES[dtype], reporter, with_leave_out=False)
        rows = [SensitivityRow(name=name, one_in=single.finite) for name, single, _ in found]
        rankings[dtype] = [row.name for row in ranked(rows, judge.criterion)]
    return rankings


def make_plan(
    config: ExperimentConfig,
    criterion: Criterion | str,
    budget_s: float,
    progress: ProgressFn | None = None,
    cancel: CancelFn | None = None,
    *,
    routes: Sequence[str] | None = None,
    clock: Callable[[], float] = time.monotonic,
    started: float | None = None,
) -> PlanDocument:
    """The plan for `config` (its model, data, dtype first, threads, budgets and the layers it
    keeps in float32) that meets `criterion`, searched within `budget_s` seconds over `routes`
    (default: every route). The budget runs from `started` on `clock` (when the user asked:
    default now) and covers everything after it.

    Raises ConfigError (bad request, a keep pattern that names no layer, a criterion the model
    cannot be judged by), Cancelled (checked before every row and candidate, and between timed
    blocks), or what building the model raises."""
    budget = Budget(budget_s, clock, clock() if started is None else started)
    if isinstance(criterion, str):
        criterion = parse_criterion(criterion)
    routes = tuple(routes or route_names())
    check_request(config, criterion, budget_s, routes)
    reporter = Reporter(progress, cancel)
    if "compiled" in routes:
        import torch._dynamo as dynamo

        dynamo.reset()  # a session plans many models: each compiles afresh
    with torch_threads(config.threads) as threads, torch.no_grad():
        subject = prepare_subject(config, reporter.span(0.0, 0.1))
        judge = judge_for(subject, criterion)
        meter = LoadMeter()
        dtype = subject.config.dtype
        sensitivity = sensitivity_rows(
            subject, judge, TORCH_DTYPES[dtype], reporter.span(0.1, 0.25), budget.share_left
        )
        dtypes = (dtype, *(d for d in DTYPES if d != dtype))
        rankings = _rankings(subject, judge, sensitivity, dtypes, budget, reporter.span(0.25, 0.3))
        space = Space(
            base=Choice("eager", FLOAT32, threads),
            routes=routes,
            dtypes=dtypes,
            threads=thread_counts(free_cores(meter)),
            rankings=rankings,
            rows=subject.layers,
            kept=subject.kept,
        )
        forward_s = forward_seconds(lambda: subject.model(subject.x))
        bench = LiveBench(subject, judge, threads, forward_s)
        search = Search(bench, criterion, space, budget.deadline, clock, reporter.span(0.3, 1))
        try:
            with user_phase(subject.config, "the plan's search"):
                found = search.run()
        finally:
            bench.release()
    return plan_document(
        subject.config, criterion, found, sensitivity, budget_s, budget.spent(), threads
    )


def document_interval(interval: Interval | None) -> SpeedupInterval | None:
    """A 95% interval as the plan writes it (one of lower coverage is not written)."""
    if interval is None or not interval.shown:
        return None
    estimate = (
        interval.estimate
        if interval.estimate is not None
        else math.sqrt(interval.low * interval.high)
    )
    return SpeedupInterval(low=interval.low, high=interval.high, estimate=estimate)


def _value(tried: Tried) -> float | None:
    return None if tried.measured is None else tried.measured.finite


#: The memory (MiB) a choice needs, None where the model could not be traced.
MemoryOf = Callable[[Choice], float | None]


def _memory_of(config: ExperimentConfig) -> MemoryOf:
    """memory.memory_mb for `config`, once per route and dtype."""
    known: dict[tuple[str, str], float | None] = {}

    def of(choice: Choice) -> float | None:
        key = (choice.route, choice.dtype)
        if key not in known:
            known[key] = memory_mb(config, choice)
        return known[key]

    return of


def tried_part(tried: Tried, memory: MemoryOf | None = None) -> PlanChoice:
    """A candidate tried as the document's part: its interval, its criterion value, its
    flipped examples (real data), whether its answers were float32's bit for bit and (given
    `memory`) the memory it needs."""
    measured = tried.measured
    flipped = None
    if measured is not None and measured.flips is not None and measured.held_out > 0:
        flipped = PlanFlips(count=measured.flips, held_out=measured.held_out)
    return tried.choice.part(
        document_interval(tried.interval),
        _value(tried),
        flipped,
        identical=measured is not None and measured.identical,
        memory_mb=memory(tried.choice) if memory is not None else None,
    )


def header_lines(found: Found, criterion: Criterion) -> tuple[str, ...]:
    """What the snippet's opening comment says: the outcome, the criterion, the speedup."""
    chosen = found.chosen
    first = {
        "plan": f"autocast-explorer plan: {chosen.choice.label()}",
        "float32": f"autocast-explorer plan: float32 is fastest here ({chosen.choice.label()})",
        "none": f"autocast-explorer plan: nothing met {criterion}; the closest: "
        f"{chosen.choice.label()}",
    }[found.outcome]
    lines = [first]
    value = _value(chosen)
    if value is not None:
        lines.append(f"criterion {criterion}: {value:.4g} measured")
    interval = document_interval(chosen.interval)
    if interval is not None and interval.low != interval.high:
        bounds = bounds_text(interval.low, interval.high, " to ")
        lines.append(
            f"speedup {ratio_text(interval.estimate)}x (95%: {bounds}) against float32 eager"
        )
    flips = flips_text(tried_part(chosen))
    if flips and chosen.lowers:
        lines.append(flips)
    if found.outcome == "none":
        lines.append("it does NOT meet the criterion: float32 is the safe choice")
    return tuple(lines)


def plan_document(
    config: ExperimentConfig,
    criterion: Criterion,
    found: Found,
    sensitivity: tuple[SensitivityRow, ...],
    budget_s: float,
    spent_s: float,
    threads: int,
) -> PlanDocument:
    """The plan's document from the search's answer, each candidate with the memory it
    needs (one trace per dtype, shared by the candidates of that dtype and route)."""
    chosen = found.chosen
    memory = _memory_of(config)
    candidates = tuple(
        tried.choice.candidate(
            tried_part(tried, memory), tried.met(criterion), why_not(tried, found, criterion)
        )
        for tried in found.tried
    )
    return PlanDocument(
        schema_=SCHEMA,
        created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        config=config,
        environment=environment(threads),
        outcome=found.outcome,
        criterion=str(criterion),
        chosen=tried_part(chosen, memory),
        candidates=candidates,
        sensitivity=sensitivity,
        first_divergent=first_divergent(sensitivity, criterion),
        snippet=plan_snippet(chosen.choice, header_lines(found, criterion)),
        budget_s=budget_s,
        spent_s=spent_s,
    )


__all__ = ["make_plan", "thread_counts"]

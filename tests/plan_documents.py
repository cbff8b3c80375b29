"""Plan documents made by hand, one per outcome, with every number chosen (the window's and the
words' tests read them back exactly)."""

from __future__ import annotations

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.hardware.cpu import environment
from autocast_explorer.core.planning.document import (
    PlanCandidate,
    PlanChoice,
    PlanDocument,
    SensitivityRow,
    SpeedupInterval,
)

SNIPPET = (
    "import torch\n"
    "from autocast_explorer.apply import keep_float32\n\n"
    "model = keep_float32(model, ['fc2'])\n"
    "model = torch.compile(model)\n"
    "with torch.autocast('cpu', dtype=torch.bfloat16):\n"
    "    out = model(x)\n"
)

#: The rows in the model's order: fc2 does the most damage alone, fc3 the least.
SENSITIVITY = (
    SensitivityRow(
        name="fc1", one_in=99.6, leave_out=99.0, time_share_plain=0.30, time_share_lower=0.25
    ),
    SensitivityRow(
        name="fc2", one_in=97.5, leave_out=99.9, time_share_plain=0.45, time_share_lower=0.40
    ),
    SensitivityRow(
        name="fc3", one_in=100.0, leave_out=98.8, time_share_plain=0.05, time_share_lower=0.08
    ),
    SensitivityRow(name="relu", one_in=None, leave_out=None),
)


def interval(low: float, high: float, estimate: float) -> SpeedupInterval:
    return SpeedupInterval(low=low, high=high, estimate=estimate)


def candidate(
    route: str,
    dtype: str,
    threads: int,
    keep: tuple[str, ...],
    speedup: SpeedupInterval | None,
    value: float | None,
    met: bool,
    why_not: str = "",
    memory_mb: float | None = None,
) -> PlanCandidate:
    return PlanCandidate(
        route=route,
        dtype=dtype,
        threads=threads,
        keep_float32=keep,
        speedup_interval=speedup,
        criterion_value=value,
        met=met,
        why_not=why_not,
        memory_mb=memory_mb,
    )


CANDIDATES = (
    candidate("eager", "float32", 1, (), interval(1.0, 1.0, 1.0), 100.0, True, "the reference"),
    candidate("compiled", "float32", 2, (), interval(2.3, 2.6, 2.48), 100.0, True),
    candidate(
        "eager", "bfloat16", 1, (), interval(0.12, 0.16, 0.14), 97.5, False, "agree 97.50% < 99.5%"
    ),
    candidate("compiled", "bfloat16", 2, ("fc2",), interval(2.7, 3.1, 2.9), 99.8, True, "", 126.4),
)


def plan_of(
    outcome: str,
    config: ExperimentConfig | None = None,
    criterion: str = "agree>=99.5%",
) -> PlanDocument:
    """A plan with that outcome: "plan" chooses compiled bfloat16 keeping fc2; "float32"
    compiled float32 (compiled bfloat16 then no faster); "none" the closest, eager bfloat16
    (every candidate then missed the criterion)."""
    candidates = CANDIDATES
    if outcome == "plan":
        chosen = CANDIDATES[3]
    elif outcome == "float32":
        tie = "not faster than compiled float32: the intervals overlap"
        slower = CANDIDATES[3].model_copy(
            update={"speedup_interval": interval(2.0, 2.5, 2.2), "why_not": tie}
        )
        candidates = (*CANDIDATES[:3], slower)
        chosen = CANDIDATES[1]
    else:
        candidates = tuple(c.model_copy(update={"met": False}) for c in CANDIDATES)
        chosen = CANDIDATES[2]
    return PlanDocument(
        config=config if config is not None else ExperimentConfig(),
        environment=environment(2),
        outcome=outcome,
        criterion=criterion,
        chosen=PlanChoice(**chosen.model_dump(exclude={"met", "why_not"})),
        candidates=candidates,
        sensitivity=SENSITIVITY,
        first_divergent="fc2",
        snippet=SNIPPET,
        budget_s=60.0,
        spent_s=41.5,
        created="2026-12-04T00:00:00+00:00",
    )

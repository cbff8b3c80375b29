"""A plan in words and in reading order: the outcome sentence, each candidate's cells, the rows
ranked by the damage they do, and what is wrong with a criterion typed.

One place so the window, the CLI and the report word a plan alike. Torch-free: the window
checks a criterion as it is typed, while torch loads.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from autocast_explorer.core.experiment.pace import bounds_text, ratio_text
from autocast_explorer.core.planning.criterion import Criterion, CriterionError, parse_criterion

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.planning.document import (
        PlanCandidate,
        PlanChoice,
        PlanDocument,
        SensitivityRow,
        SpeedupInterval,
    )

#: What each measure's value is called, in a column header and in a sentence.
MEASURE_NAMES: dict[str, tuple[str, str]] = {
    "accuracy-drop": ("Accuracy drop", "an accuracy drop of"),
    "agree": ("Agree", "agreement"),
    "sqnr": ("SQNR", "an output SQNR of"),
}
#: The candidates table's columns, in order (`candidate_cells` fills them); the third is the
#: criterion's measure (MEASURE_NAMES).
CANDIDATE_COLUMNS = (
    "Candidate",
    "Speedup (95%)",
    "Criterion value",
    "Met",
    "Memory",
    "Why not",
)
#: Plain float32 eager's speedup against itself: 1 by definition, no interval.
REFERENCE_SPEED = "1× (float32 eager itself)"


def value_text(criterion: Criterion, value: float | None) -> str:
    """A measured value in the criterion's unit: '99.70%', '41.2 dB', '0.30 points'."""
    if value is None or math.isnan(value):
        return "not measured"
    if criterion.measure == "agree":
        return f"{value:.2f}%"
    if criterion.measure == "sqnr":
        return "∞ dB (identical)" if value == math.inf else f"{value:.1f} dB"
    return f"{value:.2f} points"


def interval_text(interval: SpeedupInterval | None, level: bool = True) -> str:
    """'1.21× (95%: 1.10–1.33)': a speedup against float32 eager and its interval ('1.21×
    (1.10–1.33)' without the level, where a header names it); bounds that differ with the
    digits to tell them apart ('0.998–1.003'); float32 eager's own '1× (float32 eager itself)'."""
    if interval is None:
        return "not timed"
    if interval.low == interval.high == 1.0:
        return REFERENCE_SPEED
    bounds = bounds_text(interval.low, interval.high)
    return f"{ratio_text(interval.estimate)}× ({'95%: ' if level else ''}{bounds})"


def lowers(choice: PlanChoice) -> bool:
    """Whether a candidate is a lower precision: a lower dtype that changed the answers (one
    whose answers were float32's bit for bit is float32 after all, as the search counts it)."""
    return choice.dtype != "float32" and not choice.identical_to_float32


def flips_text(choice: PlanChoice) -> str:
    """'3 of 360 held-out examples flipped' (real data), '' where not counted."""
    flipped = choice.flipped
    if flipped is None:
        return ""
    noun = "example" if flipped.held_out == 1 else "examples"
    return f"{flipped.count} of {flipped.held_out} held-out {noun} flipped"


def kept_text(names: tuple[str, ...]) -> str:
    """'fc1 and norm', 'nothing'."""
    if not names:
        return "nothing"
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + f" and {names[-1]}"


def threads_text(threads: int) -> str:
    """'1 thread', '4 threads'."""
    return f"{threads} thread{'s' if threads != 1 else ''}"


def choice_text(choice: PlanChoice) -> str:
    """'compiled bfloat16 on 2 threads, keeping norm in float32'."""
    text = f"{choice.route} {choice.dtype} on {threads_text(choice.threads)}"
    if choice.keep_float32:
        text += f", keeping {kept_text(tuple(choice.keep_float32))} in float32"
    return text


def _reached(criterion: Criterion, choice: PlanChoice) -> str:
    return f"{MEASURE_NAMES[criterion.measure][1]} {value_text(criterion, choice.criterion_value)}"


def best_lower(plan: PlanDocument) -> PlanCandidate | None:
    """The lower-precision candidate with the highest speedup estimate, among those that met
    the criterion if any did (None: none was timed)."""
    timed = [
        (c.met, c.speedup_interval.estimate, -i, c)
        for i, c in enumerate(plan.candidates)
        if lowers(c) and c.speedup_interval is not None
    ]
    return max(timed, key=lambda entry: entry[:3])[3] if timed else None


def outcome_sentence(plan: PlanDocument) -> str:
    """The plan's answer in one or two sentences, with the chosen candidate's speedup interval
    against plain float32 eager."""
    criterion = parse_criterion(plan.criterion)
    chosen = plan.chosen
    figure = interval_text(chosen.speedup_interval)
    flips = f"; {flips_text(chosen)}" if flips_text(chosen) else ""
    if plan.outcome == "plan":
        return (
            f"Run {choice_text(chosen)}: speedup {figure} against float32 eager, with "
            f"{_reached(criterion, chosen)} ({criterion} holds){flips}."
        )
    if plan.outcome == "float32":
        best = best_lower(plan)
        lower = " No lower-precision candidate could be timed."
        if best is not None:
            missed = "" if best.met else f", and missed {criterion}"
            lower = (
                f" The best lower-precision candidate, {choice_text(best)}, reached "
                f"{interval_text(best.speedup_interval)}{missed}."
            )
        return (
            f"float32 is fastest here: run {chosen.route} float32 on "
            f"{threads_text(chosen.threads)}, speedup {figure} against float32 eager.{lower}"
        )
    return (
        f"No plan meets {criterion}: the closest, {choice_text(chosen)}, reached "
        f"{value_text(criterion, chosen.criterion_value)}, speedup {figure}{flips}."
    )


def search_summary(plan: PlanDocument) -> str:
    """'12 candidates timed in 41.5 s of a 60 s budget.'"""
    count = len(plan.candidates)
    return (
        f"{count} candidate{'s' if count != 1 else ''} timed in {plan.spent_s:.1f} s of a "
        f"{plan.budget_s:g} s budget."
    )


def candidate_cells(candidate: PlanCandidate, criterion: Criterion) -> tuple[str, ...]:
    """One row of the candidates table, in CANDIDATE_COLUMNS' order."""
    return (
        choice_text(candidate),
        interval_text(candidate.speedup_interval, level=False),
        value_text(criterion, candidate.criterion_value),
        "yes" if candidate.met else "no",
        memory_text(candidate.memory_mb),
        candidate.why_not or ("—" if candidate.met else ""),
    )


def memory_text(mib: float | None) -> str:
    """'≈ 37 MB' (estimated from a trace); '' where the model could not be traced."""
    if mib is None:
        return ""
    return f"≈ {mib:,.0f} MB" if mib >= 10 else f"≈ {mib:.1f} MB"


def damage_key(criterion: Criterion, value: float | None) -> float:
    """Sorts rows most damaging first: a low agreement or SQNR, a high accuracy drop; rows not
    measured last."""
    if value is None or math.isnan(value):
        return math.inf
    return value if criterion.op == ">=" else -value


def ranked_rows(plan: PlanDocument) -> tuple[SensitivityRow, ...]:
    """The sensitivity rows, most damaging (one-in) first; ties keep the model's order."""
    criterion = parse_criterion(plan.criterion)
    return tuple(sorted(plan.sensitivity, key=lambda row: damage_key(criterion, row.one_in)))


def criterion_problem(text: str, config: ExperimentConfig | None) -> str:
    """What is wrong with a criterion typed for this config ('' when nothing is)."""
    try:
        criterion = parse_criterion(text)
    except CriterionError as exc:
        return str(exc)
    if criterion.needs_data and config is not None and config.data == "synthetic":
        return (
            f"{criterion.measure} needs real data (held-out accuracy): choose data on the left, "
            "or use agree>=… or sqnr>=…"
        )
    return ""

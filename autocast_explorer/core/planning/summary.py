"""A plan in words, as `autocast-explorer plan` prints it: the outcome, the layers worst first,
every candidate and why it lost, the budget, and the code. Read from the document alone, so a
saved plan prints the same."""

from __future__ import annotations

from autocast_explorer.core.planning.choice import Choice
from autocast_explorer.core.planning.criterion import Criterion, parse_criterion
from autocast_explorer.core.planning.document import PlanChoice, PlanDocument
from autocast_explorer.core.planning.ranking import ranked
from autocast_explorer.core.planning.words import flips_text, interval_text, lowers, memory_text

UNITS = {"agree": "%", "sqnr": " dB", "accuracy-drop": " points"}


def value_text(criterion: Criterion, value: float | None) -> str:
    """'99.8%', '41.2 dB', '0.3 points'; 'not finite' for null (an output that overflowed or
    a forward that raised)."""
    if value is None:
        return "not finite"
    return f"{value:.4g}{UNITS[criterion.measure]}"


def _choice_line(choice: PlanChoice, criterion: Criterion) -> str:
    flips = f"; {flips_text(choice)}" if lowers(choice) and flips_text(choice) else ""
    return (
        f"{Choice.of(choice).label()}: {interval_text(choice.speedup_interval)} against "
        f"float32 eager; {criterion.measure} {value_text(criterion, choice.criterion_value)}"
        + flips
    )


def outcome_lines(plan: PlanDocument, criterion: Criterion) -> list[str]:
    """The outcome in a sentence or two."""
    chosen = _choice_line(plan.chosen, criterion)
    if plan.outcome == "plan":
        return [f"Plan: {chosen}"]
    lowered = [c for c in plan.candidates if lowers(c)]
    if plan.outcome == "float32":
        lines = [f"float32 is fastest here: {chosen}"]
        timed = [(c.speedup_interval.estimate, c) for c in lowered if c.met and c.speedup_interval]
        if timed:
            best = max(timed, key=lambda pair: pair[0])[1]
            lines.append(f"  the best lower precision: {_choice_line(best, criterion)}")
        return lines
    return [
        f"No plan meets {criterion}; the closest: {chosen}",
        "  float32 is the safe choice here.",
    ]


def sensitivity_lines(plan: PlanDocument, criterion: Criterion) -> list[str]:
    """The layers worst first, with their time shares."""
    if not plan.sensitivity:
        return []
    rows = ranked(plan.sensitivity, criterion)
    width = max(len(r.name) for r in rows)
    lines = [
        f"Layers, worst first ({plan.config.dtype}; one-in: only it lowered; leave-out: all but "
        "it lowered; time: its share of a forward):",
        f"  {'layer':<{width}}  {'one-in':>12}  {'leave-out':>12}  {'time f32':>8}  "
        f"{'time low':>8}",
    ]
    for row in rows:
        plain = f"{row.time_share_plain:.0%}" if row.time_share_plain is not None else "-"
        lower = f"{row.time_share_lower:.0%}" if row.time_share_lower is not None else "-"
        lines.append(
            f"  {row.name:<{width}}  {value_text(criterion, row.one_in):>12}  "
            f"{value_text(criterion, row.leave_out):>12}  {plain:>8}  {lower:>8}"
        )
    first = plan.first_divergent
    lines.append(
        f"First divergent layer: {first}"
        if first
        else f"First divergent layer: none (every layer lowered alone meets {criterion})"
    )
    return lines


def candidate_lines(plan: PlanDocument, criterion: Criterion) -> list[str]:
    """Every candidate tried, in the order tried."""
    lines = ["Candidates (speedup against float32 eager, 95% interval):"]
    for c in plan.candidates:
        kept = f", keep {', '.join(c.keep_float32)}" if c.keep_float32 else ""
        judged = not c.why_not.startswith("not tried")
        value = f"{value_text(criterion, c.criterion_value)} ({'meets' if c.met else 'misses'})"
        memory = f"; needs {memory_text(c.memory_mb)}" if c.memory_mb is not None else ""
        lines.append(
            f"  {c.route} {c.dtype} ×{c.threads}{kept}: {interval_text(c.speedup_interval)}; "
            f"{value if judged else 'not judged'}{memory}"
            + (f" — {c.why_not}" if c.why_not else "")
        )
    return lines


def format_plan(plan: PlanDocument) -> str:
    """The whole plan as text."""
    criterion = parse_criterion(plan.criterion)
    env = plan.environment
    lines = [
        f"Plan for {plan.config.title} on {env.cpu_model} (torch {env.torch_version}, "
        f"{env.threads} thread{'s' if env.threads != 1 else ''}); criterion {criterion}",
        *outcome_lines(plan, criterion),
        "",
        *sensitivity_lines(plan, criterion),
        "",
        *candidate_lines(plan, criterion),
        f"Searched for {plan.spent_s:.1f} s of a {plan.budget_s:g} s budget.",
        "",
        "The code (the JSON's `snippet`):",
        "",
        plan.snippet.rstrip("\n"),
    ]
    return "\n".join(lines)

"""The Sweeps tab's sentences: what a sweep will measure and where it crosses 1.0 so far.

Plain functions of the config, spec and points, so the tab only decides where they go.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.sweeps.result import SweepPoint, SweepResult
    from autocast_explorer.core.sweeps.spec import SweepSpec


def values_preview(values: tuple[int, ...]) -> str:
    """Up to six values in full; more as the first three and the last two."""
    if len(values) <= 6:
        return ", ".join(map(str, values))
    return f"{values[0]}, {values[1]}, {values[2]} … {values[-2]}, {values[-1]}"


def plan_sentence(config: ExperimentConfig, spec: SweepSpec) -> str:
    """How many points, of what, for how long, and what stays fixed from the window's config."""
    if config.model != "mlp":
        from autocast_explorer.core.experiment.families import family

        label = family(config).sweep_label(spec.param)
        what = f"{label} {values_preview(spec.values)}"
        rest = config.title + ("" if spec.param == "batch" else f", batch {config.batch}")
    elif spec.is_grid:
        what = (
            f"batch {values_preview(spec.values)} × hidden width "
            f"{values_preview(spec.width_values)}"
        )
        rest = f"input {config.widths[0]}, {len(config.widths) - 2} hidden, "
        rest += f"{config.widths[-1]} classes"
    elif spec.param == "batch":
        what = f"batch {values_preview(spec.values)}"
        rest = f"widths {','.join(map(str, config.widths))}"
    else:
        what = f"hidden width {values_preview(spec.values)}"
        rest = (
            f"input {config.widths[0]}, {len(config.widths) - 2} hidden, "
            f"{config.widths[-1]} classes, batch {config.batch}"
        )
    threads = config.threads or "auto"
    return (
        f"{len(spec)} points: {what} · {config.min_time:g} s each ≈ "
        f"{len(spec) * config.min_time:.0f} s + warm-up · {rest} · {config.dtype} · "
        f"threads {threads}"
    )


def crossover_text(spec: SweepSpec, points: Sequence[SweepPoint], final: SweepResult | None) -> str:
    """A finished sweep's crossover sentence, or the one the points so far give (marked so)."""
    if final is not None:
        return final.crossover_sentence
    text = _grid_crossovers(spec, points) if spec.is_grid else _line_crossover(spec, points)
    if points:
        text = f"So far ({len(points)} of {len(spec)} points): {text}"
    return text


def _grid_crossovers(spec: SweepSpec, points: Sequence[SweepPoint]) -> str:
    """Each grid row (hidden width) with two points or more: where it crosses 1.0."""
    from autocast_explorer.core.sweeps.crossover import crossovers, format_value

    parts = []
    for w in spec.width_values:
        row = [p for p in points if p.value2 == w]
        if len(row) >= 2:
            told = [p for p in row if p.call.graded]
            found = crossovers([p.value for p in told], [p.speedup for p in told])
            where = ", ".join(format_value(v) for v in found) or "not yet"
            parts.append(f"width {w}: {where}")
    return "Crossing 1.0 at batch — " + "; ".join(parts) if parts else ""


def _line_crossover(spec: SweepSpec, points: Sequence[SweepPoint]) -> str:
    from autocast_explorer.core.sweeps.result import crossover_sentence

    ordered = sorted(points, key=lambda p: p.value)
    return crossover_sentence(
        spec.param, [p.value for p in ordered], [p.told_speedup for p in ordered]
    )

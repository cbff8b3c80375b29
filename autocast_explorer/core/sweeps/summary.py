"""Words and tables for a sweep: what `autocast-explorer sweep` prints.

The header and one row per point are separate so the CLI can print rows as points stream in.
"""

from __future__ import annotations

import math

from autocast_explorer.core.experiment.certainty import SPEEDUP_MEANING
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.sweeps.points import SweepPoint
from autocast_explorer.core.sweeps.result import SweepResult
from autocast_explorer.core.sweeps.roofline import RooflinePoint
from autocast_explorer.core.sweeps.spec import SweepSpec


def sweep_title(config: ExperimentConfig, spec: SweepSpec) -> str:
    if config.model != "mlp":
        from autocast_explorer.core.experiment.families import family

        label = family(config).sweep_label(spec.param)
        return (
            f"Autocast Explorer sweep · {label} over {len(spec.values)} values ({config.title}"
            f"{'' if spec.param == 'batch' else f' · batch {config.batch}'}) · autocast dtype "
            f"{config.dtype} · {config.min_time:g} s per point"
        )
    what = {
        "batch": f"batch over {len(spec.values)} values (widths "
        f"{','.join(map(str, config.widths))})",
        "width": f"hidden width over {len(spec.values)} values (input {config.widths[0]}, "
        f"{len(config.widths) - 2} hidden, {config.widths[-1]} classes, batch {config.batch})",
    }[spec.param]
    if spec.is_grid:
        what = (
            f"batch × hidden width grid, {len(spec.values)} × {len(spec.width_values)} points "
            f"(input {config.widths[0]}, {config.widths[-1]} classes)"
        )
    return (
        f"Autocast Explorer sweep · {what} · autocast dtype {config.dtype} · "
        f"{config.min_time:g} s per point"
    )


def table_header(spec: SweepSpec) -> str:
    first = "batch" if spec.is_grid else spec.param
    extra = f"{'width':>7}" if spec.is_grid else ""
    return (
        f"{first:>7}{extra}  {'float32 ms':>11} {'p25–p75':>17}  "
        f"{'autocast ms':>11} {'p25–p75':>17}  {'speedup':>7} {'95% interval':>13}  "
        f"{'GFLOP/s f32':>11} {'GFLOP/s auto':>12}"
    )


def point_row(point: SweepPoint) -> str:
    extra = f"{point.value2:>7}" if point.value2 is not None else ""
    told = point.told_speedup  # no figure where the point could not tell
    speedup = f"{told:6.2f}×" if math.isfinite(told) else "      ?"
    p, a = point.plain, point.autocast
    routes = "".join(
        f"  {r.name} {r.speedup:.2f}×" if r.call.graded else f"  {r.name} —" for r in point.routes
    )
    return (
        f"{point.value:>7}{extra}  {p.median_ms:11.4f} {_range(p.p25_ms, p.p75_ms):>17}  "
        f"{a.median_ms:11.4f} {_range(a.p25_ms, a.p75_ms):>17}  {speedup} {_interval(point):>13}  "
        f"{point.gflops_plain:11.1f} {point.gflops_autocast:12.1f}{routes}"
    )


def _interval(point: SweepPoint) -> str:
    """'[1.66–1.79]'; '! noisy' or '! can't tell' where the point states no figure, 'few
    pairs' for an interval under 95% (never shown as one), '' for points saved without one."""
    interval = point.interval
    call = point.call
    if call.kind in ("noisy", "unclear"):
        return "! noisy" if call.too_noisy else "! can't tell"
    if interval is None:
        return ""
    if not interval.shown:
        return "few pairs"
    return f"[{interval.low:.2f}–{interval.high:.2f}]"


def _range(low: float, high: float) -> str:
    return f"{low:.4f}–{high:.4f}"


def speedup_grid_table(result: SweepResult) -> list[str]:
    """Grid: speedups with widths down and batch across."""
    lines = [
        "Speedup (float32 / autocast; ?: could not tell): rows = hidden width, columns = batch"
    ]
    lines.append(f"{'':>8}" + "".join(f"{b:>8}" for b in result.spec.values))
    told = {(p.value2, p.value): p.told_speedup for p in result.points}
    for width in result.spec.width_values:
        row = [told.get((width, b), math.nan) for b in result.spec.values]
        cells = "".join(f"{s:8.2f}" if math.isfinite(s) else f"{'?':>8}" for s in row)
        lines.append(f"{width:>8}{cells}")
    return lines


def interval_note(result: SweepResult) -> list[str]:
    """What the interval column means and how the points stopped ([] for older files)."""
    measured = [p.evidence for p in result.points if p.evidence is not None]
    if not measured:
        return []
    precise = sum(e.stopped == "precise" for e in measured)
    target = next((e.target for e in measured if e.target is not None), None)
    stalls = sum(len(e.stalls) for e in measured)
    how = (
        f"{precise} of {len(measured)} points reached ±{target:.0%} and stopped early, the "
        "rest spent their budget"
        if target is not None
        else "every point spent its whole budget"
    )
    return [
        f"[low–high]: the 95% interval of the point's speedup ({SPEEDUP_MEANING}); ! : too "
        "noisy to tell or can't tell (no figure, ? in the speedup column); few pairs: too few "
        f"for a 95% interval. {how}; {stalls} stalled blocks re-measured."
    ]


def format_conclusion(result: SweepResult) -> str:
    """What follows the table: crossover, verdict, kernels, roofline, warnings."""
    lines: list[str] = ["", *interval_note(result), f"Measured on {result.environment.label()}"]
    if result.is_grid:
        lines += speedup_grid_table(result)
        lines.append("")
    lines.append(result.crossover_sentence)
    lines.append(f"Verdict: {result.verdict.sentence}")
    if result.verdict.onednn is not None:
        lines.append(f"oneDNN: {result.verdict.onednn.summary}")
    roof = result.roofline
    lines.append(f"Roofline (estimates; {roof.flops_formula}):")
    for peak in roof.peaks.values():
        lines.append(f"  {peak.dtype:<9} peak {peak.formula} [{peak.isa}; {peak.note}]")
    best: dict[str, RooflinePoint] = {}
    for point in roof.points:
        if point.mode not in best or point.gflops > best[point.mode].gflops:
            best[point.mode] = point
    for mode, point in best.items():
        lines.append(
            f"  best {mode:<9}{point.gflops:8.1f} GFLOP/s at {result.spec.param.split(',')[0]} "
            f"{point.value} (intensity {point.intensity:.1f} FLOP/byte)"
        )
    if roof.note:
        lines.append(f"  note: {roof.note}")
    lines += [f"Warning: {w}" for w in result.warnings]
    return "\n".join(lines)


def format_sweep(result: SweepResult) -> str:
    """The whole report at once (title, table, conclusion)."""
    lines = [sweep_title(result.config, result.spec), "", table_header(result.spec)]
    lines += [point_row(p) for p in result.points]
    return "\n".join(lines) + "\n" + format_conclusion(result)

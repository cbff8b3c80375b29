"""The routes of a result as text: the table `run --routes` prints and the report embeds.

Torch-free (the routes package, which imports torch, only for type checking): the window's
Routes tab imports it while it is built, before torch has loaded."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from autocast_explorer.core.experiment.route_kinds import route_label

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.certainty import SpeedCall
    from autocast_explorer.core.experiment.routes import RouteResult


def computes_text(route: RouteResult) -> str:
    """What the lower side ran, as tables and charts say it: 'compiled autocast (bfloat16)';
    for a route whose own evidence says it computed float32 after all (implicit: oneDNN ran
    no GEMM with bf16 maths), 'float32 (fp32_precision=bf16 unused)'."""
    label = route_label(route.name)
    if route.computed_dtype != route.lower_dtype:
        return f"{route.computed_dtype} ({label} unused)"
    return f"{label} ({route.lower_dtype})"


def route_cells(route: RouteResult, call: SpeedCall | None = None) -> list[str]:
    """One route as table cells ('—' where a side was not measured): name, float32 ms, lower
    ms, speedup with its interval and call, lower side, output dtype, compile time, SQNR,
    agreement. The Routes tab and the report's table both start from these; `call`: the
    route's call under the run's load (ExperimentResult.route_call)."""
    median = {side: getattr(stats, "median_ms", None) for side, stats in
              (("plain", route.plain), ("lower", route.lower))}  # fmt: skip
    error = route.error
    if error is None:
        sqnr = "—"
    elif error.identical:
        sqnr = "identical"
    else:
        sqnr = f"{error.sqnr_db:.1f} dB" if math.isfinite(error.sqnr_db) else str(error.sqnr_db)
    return [
        route.name,
        *("—" if median[side] is None else f"{median[side]:.4g}" for side in ("plain", "lower")),
        route.speedup_text(call),
        computes_text(route),
        route.output_dtype.get("lower", "—"),
        "—" if route.compile_s is None else f"{route.compile_s:.1f} s",
        sqnr,
        "—" if route.agreement is None else f"{route.agreement.fraction:.1%}",
    ]


def _ms(stats: object) -> str:
    median = getattr(stats, "median_ms", None)
    return f"{median:10.3f}" if median is not None else f"{'—':>10}"


def _sqnr(route: RouteResult) -> str:
    if route.error is None:
        return f"{'—':>10}"
    if route.error.identical:
        return f"{'identical':>10}"
    db = route.error.sqnr_db
    return f"{db:7.1f} dB" if math.isfinite(db) else f"{db:>10}"


def route_lines(
    routes: tuple[RouteResult, ...], calls: Sequence[SpeedCall] | None = None
) -> list[str]:
    """A header, one row per route and its finding; empty when only eager was asked for.
    `calls`: each route's call under the run's load (else its own)."""
    if not routes:
        return []
    calls = calls if calls is not None else [route.call for route in routes]
    lines = [
        "Routes (median ms per forward, float32 side vs lower side; error and agreement of the "
        "lower side against eager float32):",
        f"  {'route':<9}{'float32':>10}{'lower':>10}{'speedup':>9}  {'lower computes':<36} "
        f"{'output':<10}{'compile':>9}{'SQNR':>11}{'argmax':>9}",
    ]
    for route, call in zip(routes, calls, strict=True):
        told = call.graded and math.isfinite(route.speedup)
        speedup = f"{route.speedup:8.2f}×" if told else f"{'—':>9}"
        compile_s = f"{route.compile_s:8.1f}s" if route.compile_s is not None else f"{'—':>9}"
        agree = f"{route.agreement.fraction:8.1%}" if route.agreement else f"{'—':>8}"
        computes = computes_text(route)
        lines.append(
            f"  {route.name:<9}{_ms(route.plain)}{_ms(route.lower)}{speedup}  {computes:<36} "
            f"{route.output_dtype.get('lower', '—'):<10}{compile_s}{_sqnr(route)} {agree}"
        )
        if call.kind != "untimed":
            said = route.speedup_text(call)
            if call.kind in ("faster", "slower"):
                said = f"the lower side ran {said}"
            lines.append(f"    {route.name}: {said}")
        if route.finding:
            lines.append(f"    {route.name}: {route.finding}")
        if route.graph_ops:
            ops = ", ".join(f"{op} ×{n}" for op, n in route.graph_ops.items())
            lines.append(f"    graph ops Dynamo captured: {ops}")
    return lines

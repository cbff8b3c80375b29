"""The routes of a result as text: the table `run --routes` prints and the report embeds.

Torch-free (the routes package, which imports torch, only for type checking): the window's
Routes tab imports it while it is built, before torch has loaded."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from autocast_explorer.core.experiment.certainty import SPEED_CALL_WORDS
from autocast_explorer.core.experiment.pace import ratio_text
from autocast_explorer.core.experiment.route_kinds import route_label

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.routes import RouteResult


def route_cells(route: RouteResult) -> list[str]:
    """One route as table cells ('—' where a side was not measured): name, float32 ms, lower
    ms, speedup with its interval, lower side, output dtype, compile time, SQNR, agreement. The
    Routes tab and the report's table both start from these."""
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
        route.speedup_text(),
        f"{route_label(route.name)} ({route.lower_dtype})",
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


def route_lines(routes: tuple[RouteResult, ...]) -> list[str]:
    """A header, one row per route and its finding; empty when only eager was asked for."""
    if not routes:
        return []
    lines = [
        "Routes (median ms per forward, float32 side vs lower side; error and agreement of the "
        "lower side against eager float32):",
        f"  {'route':<9}{'float32':>10}{'lower':>10}{'speedup':>9}  {'lower computes':<31}"
        f"{'output':<10}{'compile':>9}{'SQNR':>11}{'argmax':>9}",
    ]
    for route in routes:
        speedup = f"{route.speedup:8.2f}×" if math.isfinite(route.speedup) else f"{'—':>9}"
        compile_s = f"{route.compile_s:8.1f}s" if route.compile_s is not None else f"{'—':>9}"
        agree = f"{route.agreement.fraction:8.1%}" if route.agreement else f"{'—':>8}"
        computes = f"{route_label(route.name)} ({route.lower_dtype})"
        lines.append(
            f"  {route.name:<9}{_ms(route.plain)}{_ms(route.lower)}{speedup}  {computes:<31}"
            f"{route.output_dtype.get('lower', '—'):<10}{compile_s}{_sqnr(route)} {agree}"
        )
        if route.interval is not None:
            call = SPEED_CALL_WORDS[route.call.kind]
            if route.call.kind in ("faster", "slower"):
                call = f"the lower side ran {call}"
            lines.append(
                f"    {route.name}: speedup {ratio_text(route.speedup)}× "
                f"({route.interval.text()}): {call}"
            )
        if route.finding:
            lines.append(f"    {route.name}: {route.finding}")
        if route.graph_ops:
            ops = ", ".join(f"{op} ×{n}" for op, n in route.graph_ops.items())
            lines.append(f"    graph ops Dynamo captured: {ops}")
    return lines

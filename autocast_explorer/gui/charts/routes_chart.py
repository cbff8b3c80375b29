"""Routes: latency of each route's float32 and lower side, and compile time on its own chart.

Latency bars are medians with p25–p75 whiskers, two per route (float32 left, lower right);
compile time (seconds, the compiled route's first calls) is drawn apart because it is four or
more orders of magnitude longer than a forward. `drawn()` reads the plot items back for tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg

from autocast_explorer.core.experiment.route_kinds import (
    other_routes,
    route_kind,
    route_names,
    routes_filling,
)
from autocast_explorer.gui.charts.static_chart import StaticChart
from autocast_explorer.gui.charts.untold import bar_brush, hatch_note, hatched
from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.routes import RouteResult

HEADROOM = 1.25
OFFSET = 0.2
_EMPTY = np.zeros(0)


def _hint() -> str:
    """What to tick for routes, on two lines (fits a narrow chart)."""
    return f"Tick {' or '.join(k.name for k in other_routes())}\nbeside Run, then Run (F5)"


def _bar_items(plot: pg.PlotItem) -> tuple[pg.BarGraphItem, pg.ErrorBarItem]:
    bars = pg.BarGraphItem(x=[], height=[], width=0.36, brushes=[], pen=pg.mkPen(style.TEXT))
    errors = pg.ErrorBarItem(
        x=_EMPTY, y=_EMPTY, top=_EMPTY, bottom=_EMPTY, beam=0.1, pen=pg.mkPen(style.ERROR_BAR)
    )
    plot.addItem(bars)
    plot.addItem(errors)
    return bars, errors


class RoutesLatencyChart(StaticChart):
    """Median ms per forward, float32 and lower side of every route; objectName
    `routesLatencyPlot`. A side that was not timed (a finding) has no bar."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            parent,
            name="routesLatencyPlot",
            tooltip="Time per forward for each route: left bar its float32 side, right bar its "
            "lower side (median; whiskers 25th–75th percentile). Compile time is not in these "
            "bars: it has its own chart.",
            minimum=(320, 240),
            left="ms per forward",
            bottom="left: float32 · right: lower precision · whiskers p25–p75",
            grid=(False, True),
            grid_behind=True,
        )
        plot = self.getPlotItem()
        plot.getAxis("bottom").setHeight(60)
        self._bars, self._errors = _bar_items(plot)
        self._hint = pg.TextItem(_hint(), color=style.MUTED, anchor=(0.5, 0.5))
        self._hint.setFont(style.chart_font())
        plot.addItem(self._hint)
        self.clear()

    def show_routes(self, routes: tuple[RouteResult, ...], untold: Sequence[str] = ()) -> None:
        """Each route's two sides; `untold`: per route, why its call could not tell
        (speed_words.untold_words of the run's `route_call`, '' where it could): those bars
        are hatched, as the Overview's, with why in the tooltip."""
        if not routes:
            self.clear()
            return
        why = (list(untold) + [""] * len(routes))[: len(routes)]
        xs, heights, brushes, tops, bottoms = [], [], [], [], []
        for i, route in enumerate(routes):
            # A lower side is coloured by what it really computed (implicit: bf16 only where
            # oneDNN ran bf16 maths).
            sides = ((route.plain, "float32", -OFFSET), (route.lower, route.computed_dtype, OFFSET))
            for stats, dtype, dx in sides:
                if stats is None:
                    continue
                xs.append(i + dx)
                heights.append(stats.median_ms)
                brushes.append(bar_brush(style.dtype_color(dtype), bool(why[i])))
                tops.append(stats.p75_ms - stats.median_ms)
                bottoms.append(stats.median_ms - stats.p25_ms)
        self._bars.setOpts(x=xs, height=heights, brushes=brushes)
        notes = [
            hatch_note(f"the {route.name} route", w)
            for route, w in zip(routes, why, strict=True)
            if w
        ]
        self.setToolTip("\n".join([self._base_tooltip, *notes]))
        self._errors.setData(
            x=np.asarray(xs),
            y=np.asarray(heights),
            top=np.asarray(tops),
            bottom=np.asarray(bottoms),
        )
        ymax = max([h + t for h, t in zip(heights, tops, strict=True)] or [1.0]) * HEADROOM
        plot = self.getPlotItem()
        plot.setXRange(-0.6, len(routes) - 0.4, padding=0)
        plot.setYRange(0, ymax, padding=0)
        plot.getAxis("bottom").setTicks([[(i, _tick(route)) for i, route in enumerate(routes)]])
        self.set_hint("" if heights else "no route could be timed: see the findings")
        self._hint.setPos((len(routes) - 1) / 2, ymax / 2)
        style.set_title(plot, "Latency per route", "float32 side vs lower side")

    def clear(self) -> None:
        self._bars.setOpts(x=[], height=[], brushes=[])
        self._errors.setData(x=_EMPTY, y=_EMPTY, top=_EMPTY, bottom=_EMPTY)
        self.setToolTip(self._base_tooltip)
        plot = self.getPlotItem()
        plot.setXRange(-0.6, 0.6, padding=0)
        plot.setYRange(0, 1, padding=0)
        plot.getAxis("bottom").setTicks([[]])
        self.set_hint(_hint())
        self._hint.setPos(0, 0.5)
        style.set_title(plot, "Latency per route", ", ".join(route_names()))

    def drawn(self) -> dict[str, Any]:
        """What the plot items hold now: bar x positions, heights and hatching, tick texts."""
        opts = self._bars.opts
        levels = self.getPlotItem().getAxis("bottom")._tickLevels
        return {
            "x": [float(v) for v in (opts.get("x") if opts.get("x") is not None else [])],
            "heights": [float(h) for h in (opts.get("height") or [])],
            "hatched": hatched(opts.get("brushes")),
            "ticks": [text for _pos, text in (levels[0] if levels else [])],
            "hint": self._hint.toPlainText(),
            "title": self.getPlotItem().titleLabel.text,
        }


def _tick(route: RouteResult) -> str:
    """The route's name over its lower side's: the registered tick, else its dtype; what it
    really computed where that differs (implicit without a bf16 GEMM: 'float32 maths')."""
    if route.computed_dtype != route.lower_dtype:
        return f"{route.name}\n{route.computed_dtype} maths"
    kind = route_kind(route.name)
    return f"{route.name}\n{kind.tick if kind is not None and kind.tick else route.lower_dtype}"


class RoutesCompileChart(StaticChart):
    """Seconds spent compiling (the compiled route's first calls, both sides) against the
    guard's forecast; objectName `routesCompilePlot`."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            parent,
            name="routesCompilePlot",
            tooltip="torch.compile's cold cost: the first call of the float32 and of the "
            "autocast function (tracing and inductor's C++ build). Not part of the latency bars.",
            minimum=(200, 240),
            left="seconds",
            grid=(False, True),
            grid_behind=True,
        )
        plot = self.getPlotItem()
        plot.getAxis("bottom").setHeight(60)
        self._bars = pg.BarGraphItem(
            x=[], height=[], width=0.5, brushes=[], pen=pg.mkPen(style.TEXT)
        )
        plot.addItem(self._bars)
        self._label = pg.TextItem("", color=style.TEXT, anchor=(0.5, 1.0))
        self._label.setFont(style.chart_font(bold=True))
        plot.addItem(self._label)
        self._hint = pg.TextItem("", color=style.MUTED, anchor=(0.5, 0.5))
        self._hint.setFont(style.chart_font())
        plot.addItem(self._hint)
        self.clear()

    def show_routes(self, routes: tuple[RouteResult, ...]) -> None:
        owners = routes_filling("compile_s")  # the routes that compile (compiled)
        route = next((r for r in routes if r.name in owners), None)
        if route is None or route.compile_s is None:
            self.clear()
            if route is not None:
                self.set_hint("not compiled:\nsee the finding")
            return
        values = [route.compile_s]
        ticks = [(0, f"measured\n{route.compile_s:.1f} s")]
        hint = ""
        if route.compile_estimate_s is not None:
            values.append(route.compile_estimate_s)
            ticks.append((1, f"forecast\n{route.compile_estimate_s:.1f} s"))
        else:
            hint = "no forecast:\nfirst compile"
        self._bars.setOpts(
            x=list(range(len(values))),
            height=values,
            brushes=[pg.mkBrush(style.HISTOGRAM), pg.mkBrush(style.UNKNOWN_DTYPE_COLOR)][
                : len(values)
            ],
        )
        ymax = max(values) * HEADROOM or 1.0
        plot = self.getPlotItem()
        plot.setXRange(-0.6, max(len(values), 2) - 0.4, padding=0)
        plot.setYRange(0, ymax, padding=0)
        plot.getAxis("bottom").setTicks([ticks])
        self._label.setText(f"{route.compile_s:.1f} s")
        self._label.setPos(0, route.compile_s + ymax * 0.01)
        self.set_hint(hint)
        self._hint.setPos(1, ymax / 2)

    def clear(self) -> None:
        self._bars.setOpts(x=[], height=[], brushes=[])
        plot = self.getPlotItem()
        plot.setXRange(-0.6, 1.6, padding=0)
        plot.setYRange(0, 1, padding=0)
        plot.getAxis("bottom").setTicks([[]])
        self._label.setText("")
        self.set_hint("no compiled route")
        self._hint.setPos(0.5, 0.5)
        style.set_title(plot, "Compile time", "torch.compile, cold")

    def drawn(self) -> dict[str, Any]:
        levels = self.getPlotItem().getAxis("bottom")._tickLevels
        return {
            "heights": [float(h) for h in (self._bars.opts.get("height") or [])],
            "ticks": [text for _pos, text in (levels[0] if levels else [])],
            "hint": self._hint.toPlainText(),
        }

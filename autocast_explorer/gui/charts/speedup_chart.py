"""Speedup (plain ÷ autocast) vs the swept parameter, with the break-even line and crossovers.

Above the dashed line at 1.0 autocast was faster. Every place where the curve crosses 1.0 is
found by core.crossover (interpolated on a log scale) on the points measured so far, and
marked with a diamond and its value. Items are created once; markers and labels come from
small pools that only grow when a sweep has more crossings than any before.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from autocast_explorer.core.experiment.route_kinds import other_routes
from autocast_explorer.core.sweeps.crossover import BREAK_EVEN, find_crossings, format_value
from autocast_explorer.core.sweeps.spec import default_values
from autocast_explorer.gui.charts.log_ticks import log_range, value_ticks
from autocast_explorer.gui.charts.static_chart import StaticChart
from autocast_explorer.gui.charts.sweep_latency_chart import param_axis_label
from autocast_explorer.gui.charts.whiskers import whisker_ends
from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.sweeps.result import SweepPoint

#: Colors shared with the heatmap: blue = autocast faster, red = autocast slower.
FASTER = "#2166ac"
SLOWER = "#b2182b"
CROSSING = "#f2b705"
_EMPTY = np.zeros(0)
#: Labelled swept values on the x axis ("1024" and "2048" need room on a half-width chart).
X_TICKS = 8


def crossing_label(value: float, rising: bool) -> str:
    """'≈ 161 ↑' (↑: autocast wins above it, ↓: it stops winning); the axis names the param."""
    return f"≈ {format_value(value)} {'↑' if rising else '↓'}"


#: The chart's hint when no point measured so far could tell which mode was faster.
NONE_TOLD = "no point could tell which mode was faster"


class SpeedupChart(StaticChart):
    """objectName `speedupPlot`; `begin`, `show_points`/`show_series`, `clear`, `drawn`."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            parent,
            name="speedupPlot",
            tooltip=(
                "Speedup = the typical paired float32 ÷ autocast ratio at each swept value. "
                "Above the dashed line at 1.0 autocast was faster (blue points), below it "
                "slower (red); whiskers span each point's 95% interval. A hollow ○ on the 1.0 "
                "line: that point was too noisy to tell (or could not tell), so it states no "
                "figure. ◆ marks where the curve crosses 1.0, interpolated on a log scale "
                "between the points that could tell."
            ),
            minimum=(320, 260),
            left="speedup (float32 ÷ autocast), ×",
            grid=(True, True),
            log=(True, False),
        )
        plot = self.getPlotItem()
        self._break_even = pg.InfiniteLine(
            pos=BREAK_EVEN,
            angle=0,
            pen=pg.mkPen(style.TEXT, width=1.5, style=Qt.PenStyle.DashLine),
        )
        plot.addItem(self._break_even)
        self._curve = pg.PlotDataItem(
            pen=pg.mkPen(style.TEXT, width=2), symbol="o", symbolSize=9, symbolPen="w"
        )
        plot.addItem(self._curve)
        # Each point's 95% interval (core's certainty); x in log10, as the log axis draws it.
        self._whiskers = pg.ErrorBarItem(
            x=_EMPTY, y=_EMPTY, pen=pg.mkPen(style.TEXT, width=1.5), beam=0.04
        )
        plot.addItem(self._whiskers)
        self._markers = pg.PlotDataItem(
            pen=None,
            symbol="d",
            symbolSize=16,
            symbolBrush=pg.mkBrush(CROSSING),
            symbolPen=pg.mkPen(style.TEXT, width=1.5),
        )
        self._markers.setZValue(10)
        plot.addItem(self._markers)
        self._untold = _untold_marks()
        plot.addItem(self._untold)
        self._faster = pg.TextItem(
            "▲ autocast faster", color=FASTER, anchor=(0, 0), fill=(255, 255, 255, 200)
        )
        self._slower = pg.TextItem(
            "▼ autocast slower", color=SLOWER, anchor=(0, 1), fill=(255, 255, 255, 200)
        )
        for item in (self._faster, self._slower):
            item.setFont(style.chart_font(10, bold=True))
            plot.addItem(item)
        self._hint = pg.TextItem("Press Run sweep (F6)", color=style.MUTED, anchor=(0.5, 0.5))
        self._hint.setFont(style.chart_font())
        plot.addItem(self._hint)
        # Speedup curves of the other routes (`sweep --routes`), dashed beside eager's, each in
        # its registered colour.
        self._route_curves: dict[str, pg.PlotDataItem] = {}
        self._route_colors = {kind.name: kind.color for kind in other_routes()}
        for kind in other_routes():
            curve = pg.PlotDataItem(
                pen=pg.mkPen(kind.color, width=2, style=Qt.PenStyle.DashLine),
                symbol="s",
                symbolSize=7,
                symbolBrush=pg.mkBrush(kind.color),
                symbolPen="w",
            )
            plot.addItem(curve)
            self._route_curves[kind.name] = curve
        self._route_legend = pg.TextItem("", anchor=(1, 0), fill=(255, 255, 255, 200))
        self._route_legend.setFont(style.chart_font(10, bold=True))
        plot.addItem(self._route_legend)
        self._labels: list[pg.TextItem] = []
        self._guides: list[pg.InfiniteLine] = []
        self._param = "batch"
        self._crossings: list[tuple[float, bool]] = []
        self._summary = ""
        self._x_range = (0.0, 3.0)
        self.clear()

    # ---- drawing ---------------------------------------------------------------------------
    def begin(self, param: str, values: Sequence[int]) -> None:
        """A new sweep: no points yet, the x axis spanning every value to be measured."""
        self._param = param
        plot = self.getPlotItem()
        plot.setLabel("bottom", f"{param_axis_label(param)} (log scale)")
        plot.getAxis("bottom").setTicks([value_ticks(values, X_TICKS)])
        self._x_range = log_range(values)
        plot.setXRange(*self._x_range, padding=0)
        self.show_series(param, [], [])
        self.set_hint("measuring…")

    def show_points(self, points: Sequence[SweepPoint]) -> None:
        """Each point's speedup where its call could tell (whiskers: its 95% interval); a
        point that could not tell is a hollow ○ on the 1.0 line, with no figure."""
        ordered = sorted(points, key=lambda p: p.value)
        intervals = [
            (p.interval.low, p.interval.high) if p.interval and p.interval.shown else None
            for p in ordered
        ]
        told = [p.told_speedup for p in ordered]
        self.show_series(self._param, [p.value for p in ordered], told, intervals)
        untold = [p.value for p in ordered if not p.call.graded]
        self._untold.setData(untold, [BREAK_EVEN] * len(untold))
        if untold and len(untold) == len(ordered):  # "measuring…" stayed over a finished sweep
            self.set_hint(NONE_TOLD)
        if untold:
            pairs = zip(intervals, told, strict=True)
            whiskers = any(b is not None and math.isfinite(s) for b, s in pairs)
            plot = self.getPlotItem()
            first = getattr(plot, "title_args", ("Speedup",))[0]
            style.set_title(plot, first, self._legend_line(whiskers, True))
        self._show_routes(ordered)

    def _show_routes(self, ordered: Sequence[SweepPoint]) -> None:
        """Each other route's speedup (its float32 ÷ its lower side) at the points measured."""
        shown = []
        speeds: list[float] = []
        for name, curve in self._route_curves.items():
            pairs = [
                (p.value, r.speedup)
                for p in ordered
                for r in p.routes
                if r.name == name and math.isfinite(r.speedup) and r.call.graded
            ]
            curve.setData([v for v, _ in pairs], [s for _, s in pairs])
            speeds += [s for _, s in pairs]
            if pairs:
                shown.append(f"<span style='color:{self._route_colors[name]}'>╌ {name}</span>")
        plot = self.getPlotItem()
        low, high = plot.viewRange()[1]
        if speeds:  # the other routes' points stay inside the view
            low, high = max(min(low, min(speeds) * 0.85), 0.0), max(high, max(speeds) * 1.12)
            plot.setYRange(low, high, padding=0)
        self._route_legend.setHtml("<br>".join(shown))
        self._route_legend.setPos(self._x_range[1], high)

    def show_series(
        self,
        param: str,
        values: Sequence[float],
        speedups: Sequence[float],
        intervals: Sequence[tuple[float, float] | None] = (),
    ) -> None:
        """Draw a speedup series (values increasing), each point's interval where it has one,
        and every crossing core finds in it."""
        self._param = param
        x = np.asarray(values, dtype=float)
        y = np.asarray(speedups, dtype=float)
        finite = np.isfinite(y)
        whiskers = [
            (float(v), float(s), band)
            for v, s, band in zip(x, y, intervals, strict=False)
            if band is not None and math.isfinite(s)
        ]
        self._whiskers.setData(
            x=np.log10([v for v, _, _ in whiskers]) if whiskers else _EMPTY,
            y=np.asarray([s for _, s, _ in whiskers], dtype=float),
            top=np.asarray([b[1] - s for _, s, b in whiskers], dtype=float),
            bottom=np.asarray([s - b[0] for _, s, b in whiskers], dtype=float),
        )
        brushes = [pg.mkBrush(FASTER if s >= BREAK_EVEN else SLOWER) for s in y[finite]]
        self._curve.setData(x[finite], y[finite], symbolBrush=brushes or pg.mkBrush(FASTER))
        crossings = find_crossings(list(x), list(y)) if len(x) else []
        self._crossings = [(c.value, c.rising) for c in crossings]
        self._markers.setData(
            np.asarray([c.value for c in crossings], dtype=float),
            np.full(len(crossings), BREAK_EVEN),
        )
        self._place_crossing_labels()
        shown = [float(s) for s in y[finite]]
        ends = [e for _, _, band in whiskers for e in band]
        low = min([*shown, *ends, BREAK_EVEN]) * 0.85
        high = max([*shown, *ends, BREAK_EVEN]) * 1.12
        low = max(low, 0.0)
        plot = self.getPlotItem()
        plot.setYRange(low, high, padding=0)
        self._place_region_labels(list(x[finite]), shown, low, high)
        self.set_hint("" if len(shown) else self._hint.toPlainText())
        self._hint.setPos(sum(self._x_range) / 2, (low + high) / 2)
        if crossings:
            where = ", ".join(crossing_label(v, r) for v, r in self._crossings)
            self._summary = f"crosses 1.0 at {param} {where}"
        elif len(shown) >= 2:
            side = "above" if min(shown) >= BREAK_EVEN else "below"
            self._summary = f"no crossover: stays {side} 1.0"
        else:
            self._summary = ""
        self._untold.setData([], [])
        style.set_title(
            plot,
            f"Speedup vs {'batch' if param == 'batch' else 'hidden width'}",
            self._legend_line(bool(whiskers), False),
        )

    @staticmethod
    def _legend_line(whiskers: bool, untold: bool) -> str:
        """The title's second line: what each mark means (whiskers only where drawn)."""
        return (
            "dashed: 1.0, break-even · ◆ crossover"
            + (" · whiskers: 95% interval" if whiskers else "")
            + (" · ○ could not tell" if untold else "")
        )

    def _place_region_labels(
        self, values: list[float], speedups: list[float], low: float, high: float
    ) -> None:
        """'▲ autocast faster' in a top corner, '▼ … slower' in a bottom one, where no point is."""
        lo, hi = self._x_range
        xs = [(math.log10(v) - lo) / (hi - lo) for v in values]
        ys = [(s - low) / (high - low) for s in speedups]

        def free(left: bool, top: bool) -> bool:
            return not any(
                (x < 0.42 if left else x > 0.58) and (y > 0.86 if top else y < 0.14)
                for x, y in zip(xs, ys, strict=True)
            )

        for item, top in ((self._faster, True), (self._slower, False)):
            left = free(True, top) or not free(False, top)
            item.setAnchor((0 if left else 1, 0 if top else 1))
            x = lo + (hi - lo) * (0.02 if left else 0.98)
            item.setPos(x, high - (high - low) * 0.02 if top else low + (high - low) * 0.02)

    def _place_crossing_labels(self) -> None:
        plot = self.getPlotItem()
        while len(self._labels) < len(self._crossings):
            label = pg.TextItem("", color=style.TEXT, anchor=(0.5, 1.3), fill=(255, 255, 255, 220))
            label.setFont(style.chart_font(10, bold=True))
            label.setZValue(11)
            guide = pg.InfiniteLine(
                angle=90, pen=pg.mkPen(CROSSING, width=1.5, style=Qt.PenStyle.DotLine)
            )
            plot.addItem(guide)
            plot.addItem(label)
            self._labels.append(label)
            self._guides.append(guide)
        for i, (label, guide) in enumerate(zip(self._labels, self._guides, strict=True)):
            if i < len(self._crossings):
                value, rising = self._crossings[i]
                label.setText(crossing_label(value, rising))
                # Alternate above/below the line so neighbouring crossings stay readable, and
                # keep labels near an edge inside the plot.
                lo, hi = self._x_range
                where = (math.log10(value) - lo) / (hi - lo) if hi > lo else 0.5
                ax = 0.0 if where < 0.12 else 1.0 if where > 0.88 else 0.5
                label.setAnchor((ax, 1.3) if i % 2 == 0 else (ax, -0.3))
                label.setPos(math.log10(value), BREAK_EVEN)
                guide.setPos(math.log10(value))
                label.show()
                guide.show()
            else:
                label.setText("")
                label.hide()
                guide.hide()

    def clear(self) -> None:
        plot = self.getPlotItem()
        plot.setLabel("bottom", f"{param_axis_label(self._param)} (log scale)")
        plot.getAxis("bottom").setTicks([value_ticks(default_values(self._param), X_TICKS)])
        self._x_range = log_range(default_values(self._param))
        plot.setXRange(*self._x_range, padding=0)
        self.show_series(self._param, [], [])
        self._show_routes([])
        self.set_hint("Press Run sweep (F6)")

    # ---- read-back for tests ---------------------------------------------------------------
    def drawn(self) -> dict[str, Any]:
        """Points, crossover markers and labels as the items hold them."""
        curve, markers = self._curve, self._markers
        return {
            "values": [] if curve.xData is None else [float(v) for v in curve.xData],
            "speedups": [] if curve.yData is None else [float(v) for v in curve.yData],
            "break_even": float(self._break_even.value()),
            "crossovers": [] if markers.xData is None else [float(v) for v in markers.xData],
            "marker_y": [] if markers.yData is None else [float(v) for v in markers.yData],
            "labels": [label.toPlainText() for label in self._labels if label.isVisible()],
            "guides": [10 ** g.value() for g in self._guides if g.isVisible()],
            "point_colors": [pg.mkBrush(b).color().name() for b in _brushes(curve)],
            "intervals": whisker_ends(self._whiskers, log_x=True),
            "untold": [] if self._untold.xData is None else [float(v) for v in self._untold.xData],
            "title": self.getPlotItem().titleLabel.text,
            "summary": self._summary,
            "routes": {
                name: (
                    [float(v) for v in curve.xData],
                    [float(v) for v in curve.yData],
                )
                for name, curve in self._route_curves.items()
                if curve.xData is not None and len(curve.xData)
            },
            "route_colors": {  # each drawn route's pen, as the legend names it
                name: curve.opts["pen"].color().name()
                for name, curve in self._route_curves.items()
                if curve.xData is not None and len(curve.xData)
            },
            "route_legend": self._route_legend.toHtml(),
        }


def _untold_marks() -> pg.PlotDataItem:
    """The marks of points whose call could not tell: hollow, on the 1.0 line, no figure."""
    return pg.PlotDataItem(
        pen=None,
        symbol="o",
        symbolSize=11,
        symbolBrush=pg.mkBrush(255, 255, 255, 0),
        symbolPen=pg.mkPen(style.MUTED, width=2),
    )


def _brushes(curve: pg.PlotDataItem) -> list:
    brushes = curve.opts.get("symbolBrush")
    return list(brushes) if isinstance(brushes, list | tuple) and curve.xData is not None else []

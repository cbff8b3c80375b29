"""Latency vs the swept parameter, log–log: a median line and a p25–p75 band per mode.

The plot items (two bands, two lines) are created once; each streamed point only updates their
data with setData, so a sweep of 64 points redraws 64 times without rebuilding anything.
`drawn()` reads the numbers back from the items themselves.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg

from autocast_explorer.core.sweeps.spec import default_values
from autocast_explorer.gui.charts.log_ticks import decade_ticks, log_range, value_ticks
from autocast_explorer.gui.charts.static_chart import StaticChart
from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.sweeps.result import SweepPoint

MODES = ("plain", "autocast")
BAND_ALPHA = 70
_EMPTY = np.zeros(0)
#: Labelled swept values on the x axis ("1024" and "2048" need room on a half-width chart).
X_TICKS = 8

PARAM_AXIS = {
    "batch": "batch size, rows per forward",
    "width": "hidden width, units in every hidden layer",
}


def param_axis_label(param: str) -> str:
    return PARAM_AXIS.get(param, param)


def _brush(color: str, alpha: int) -> Any:
    c = pg.mkColor(color)
    c.setAlpha(alpha)
    return pg.mkBrush(c)


class SweepLatencyChart(StaticChart):
    """objectName `sweepLatencyPlot`; `show_points(param, points, dtype)` and `clear()`."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            parent,
            name="sweepLatencyPlot",
            tooltip=(
                "Time per forward pass at each swept value, both axes logarithmic. Line: median "
                "of the timed blocks; shaded band: 25th–75th percentile. Points appear as they "
                "are measured."
            ),
            minimum=(320, 260),
            left="ms per forward (log scale)",
            grid=(True, True),
            log=(True, True),
        )
        plot = self.getPlotItem()
        self._legend = plot.addLegend(offset=(8, 4), labelTextSize="10pt")
        self._lines: dict[str, pg.PlotDataItem] = {}
        self._low: dict[str, pg.PlotDataItem] = {}
        self._high: dict[str, pg.PlotDataItem] = {}
        self._bands: dict[str, pg.FillBetweenItem] = {}
        for mode in MODES:
            # Transparent (not absent) pens: FillBetweenItem fills between the curves' paths.
            low = pg.PlotDataItem(pen=pg.mkPen(0, 0, 0, 0))
            high = pg.PlotDataItem(pen=pg.mkPen(0, 0, 0, 0))
            line = pg.PlotDataItem(pen=pg.mkPen(width=2.5), symbol="o", symbolSize=8)
            band = pg.FillBetweenItem(low, high)
            for item in (low, high, band):
                plot.addItem(item)
            plot.addItem(line)
            self._low[mode], self._high[mode] = low, high
            self._lines[mode], self._bands[mode] = line, band
        self._hint = pg.TextItem("Press Run sweep (F6)", color=style.MUTED, anchor=(0.5, 0.5))
        self._hint.setFont(style.chart_font())
        plot.addItem(self._hint)
        self._param = "batch"
        self._dtype = "bfloat16"
        self._subtitle = ""
        self.clear()

    # ---- drawing ---------------------------------------------------------------------------
    def begin(self, param: str, values: Sequence[int], dtype: str, subtitle: str = "") -> None:
        """A new sweep: empty curves, the x axis spanning every value to be measured."""
        self._param, self._dtype, self._subtitle = param, dtype, subtitle
        self._style_modes(dtype)
        plot = self.getPlotItem()
        plot.setLabel("bottom", f"{param_axis_label(param)} (log scale)")
        plot.getAxis("bottom").setTicks([value_ticks(values, X_TICKS)])
        lo, hi = log_range(values)
        plot.setXRange(lo, hi, padding=0)
        self._set_points([], [], [])
        self.set_hint("measuring…")
        self._hint.setPos((lo + hi) / 2, 0)
        self._set_title()

    def show_points(self, points: Sequence[SweepPoint]) -> None:
        """Draw `points` (in sweep order); the x axis is the one set by `begin`."""
        ordered = sorted(points, key=lambda p: p.value)
        self._set_points(
            [p.value for p in ordered], [p.plain for p in ordered], [p.autocast for p in ordered]
        )

    def _set_points(self, values: list[int], plain: list, auto: list) -> None:
        x = np.asarray(values, dtype=float)
        every = []
        for mode, stats in (("plain", plain), ("autocast", auto)):
            med = np.asarray([s.median_ms for s in stats], dtype=float)
            p25 = np.asarray([s.p25_ms for s in stats], dtype=float)
            p75 = np.asarray([s.p75_ms for s in stats], dtype=float)
            self._lines[mode].setData(x, med)
            self._low[mode].setData(x, p25)
            self._high[mode].setData(x, p75)
            every += [*p25, *p75]
        plot = self.getPlotItem()
        positive = [v for v in every if v > 0]
        if positive:
            lo, hi = min(positive), max(positive)
            plot.getAxis("left").setTicks([decade_ticks(lo, hi)])
            pad = max((math.log10(hi) - math.log10(lo)) * 0.08, 0.1)
            plot.setYRange(math.log10(lo) - pad, math.log10(hi) + pad, padding=0)
            self.set_hint("")
        else:
            plot.getAxis("left").setTicks([decade_ticks(0.01, 10)])
        self._set_title()

    def clear(self) -> None:
        self._style_modes(self._dtype)
        plot = self.getPlotItem()
        for mode in MODES:
            for item in (self._lines[mode], self._low[mode], self._high[mode]):
                item.setData(_EMPTY, _EMPTY)
        plot.setLabel("bottom", f"{param_axis_label(self._param)} (log scale)")
        plot.getAxis("bottom").setTicks([value_ticks(default_values(self._param), X_TICKS)])
        plot.getAxis("left").setTicks([decade_ticks(0.01, 10)])
        lo, hi = log_range(default_values(self._param))
        plot.setXRange(lo, hi, padding=0)
        plot.setYRange(-2, 1, padding=0)
        self.set_hint("Press Run sweep (F6)")
        self._hint.setPos((lo + hi) / 2, -0.5)
        self._subtitle = ""
        self._set_title()

    def _style_modes(self, dtype: str) -> None:
        self._legend.clear()
        names = {"plain": "float32 (plain)", "autocast": f"autocast {dtype}"}
        for mode in MODES:
            color = style.dtype_color("float32" if mode == "plain" else dtype)
            self._lines[mode].setPen(pg.mkPen(color, width=2.5))
            self._lines[mode].setSymbolBrush(pg.mkBrush(color))
            self._lines[mode].setSymbolPen(pg.mkPen("w", width=1))
            self._bands[mode].setBrush(_brush(color, BAND_ALPHA))
            self._legend.addItem(self._lines[mode], f"{names[mode]} median")

    def _set_title(self) -> None:
        name = {"batch": "batch", "width": "hidden width"}.get(self._param, self._param)
        second = "line: median · band: p25–p75"
        if self._subtitle:
            second = f"{self._subtitle} · {second}"
        style.set_title(self.getPlotItem(), f"Latency vs {name}", second)

    # ---- read-back for tests ---------------------------------------------------------------
    def drawn(self) -> dict[str, Any]:
        """What the items hold: x values and, per mode, medians and band edges (in ms)."""

        def data(item: pg.PlotDataItem) -> list[float]:
            return [] if item.yData is None else [float(v) for v in item.yData]

        line = self._lines["plain"]
        plot = self.getPlotItem()
        out: dict[str, Any] = {
            "values": [] if line.xData is None else [float(v) for v in line.xData],
            "x_label": plot.getAxis("bottom").labelText,
            "y_label": plot.getAxis("left").labelText,
            "title": plot.titleLabel.text,
            "log": (plot.ctrl.logXCheck.isChecked(), plot.ctrl.logYCheck.isChecked()),
            "legend": [label.text for _sample, label in self._legend.items],
        }
        for mode in MODES:
            out[mode] = {
                "median": data(self._lines[mode]),
                "p25": data(self._low[mode]),
                "p75": data(self._high[mode]),
                "band_color": self._bands[mode].brush().color().name(),
                "line_color": self._lines[mode].opts["pen"].color().name(),
            }
        return out

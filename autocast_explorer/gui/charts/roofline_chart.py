"""Roofline: achieved GFLOP/s per measured point against the estimated compute peaks.

x is arithmetic intensity (FLOPs per byte moved), y achieved GFLOP/s, both logarithmic. The
horizontal lines are core.roofline's *estimated* peaks (cores × GHz × lanes × FMA units × 2)
for float32 and the autocast dtype, labelled as estimates; the formula and its inputs are
shown beside the chart by the hardware tab. Everything drawn comes from a core Roofline.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from autocast_explorer.gui.charts.log_ticks import decade_ticks
from autocast_explorer.gui.charts.static_chart import LEGEND_ROW, StaticChart
from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.sweeps.roofline import Roofline

MODES = ("plain", "autocast")
_EMPTY = np.zeros(0)


#: The roofline's hint before anything was measured.
NOTHING_MEASURED = "No measured points yet: Run (F5) or Run sweep (F6)"


def peak_label(dtype: str, gflops: float) -> str:
    return f"{dtype} peak ≈ {gflops:,.0f} GFLOP/s (estimate)"


class RooflineChart(StaticChart):
    """objectName `rooflinePlot`; `show_roofline(roofline)`, `clear()`, `drawn()`."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            parent,
            name="rooflinePlot",
            tooltip=(
                "Each point is one mode at one measured size: x = FLOPs per byte moved "
                "(estimated), y = GFLOP/s achieved. Dashed lines: estimated compute peaks. Points "
                "far below a peak are limited by memory traffic or per-call overhead, not by "
                "arithmetic."
            ),
            minimum=(320, 240),
            left="achieved GFLOP/s (log scale)",
            bottom="arithmetic intensity, FLOP/byte (log scale)",
            grid=(True, True),
            log=(True, True),
        )
        plot = self.getPlotItem()
        # The legend is a row under the axis, not inside the plot: inside, it covered the lower
        # peak's label wherever the two met (a narrow chart, points under the peaks).
        self._legend = pg.LegendItem(colCount=2, labelTextSize="10pt")
        plot.layout.addItem(self._legend, LEGEND_ROW, 1)
        self._points: dict[str, pg.PlotDataItem] = {}
        for mode, symbol in (("plain", "o"), ("autocast", "t1")):
            item = pg.PlotDataItem(pen=pg.mkPen(width=1), symbol=symbol, symbolSize=10)
            plot.addItem(item)
            self._points[mode] = item
        self._peaks: list[pg.InfiniteLine] = []
        for _ in range(2):
            line = pg.InfiniteLine(
                angle=0,
                pen=pg.mkPen(style.TEXT, width=2, style=Qt.PenStyle.DashLine),
                label="",
                labelOpts={"position": 0.03, "color": style.TEXT, "anchors": [(0, 1), (0, 1)]},
            )
            line.label.setFont(style.chart_font(10, bold=True))
            plot.addItem(line)
            self._peaks.append(line)
        self._peak_data: list[tuple[str, float]] = []
        self._hint = pg.TextItem("", color=style.MUTED, anchor=(0.5, 0.5))
        self._hint.setFont(style.chart_font())
        plot.addItem(self._hint)
        self.clear()

    def show_roofline(
        self, roofline: Roofline, dtype: str, source: str = "", empty: str = NOTHING_MEASURED
    ) -> None:
        """Draw `roofline`'s points and peaks; `source` says what was measured, `empty` why
        there is no point (the hint shown then)."""
        self._legend.clear()
        names = {"plain": "float32 (plain)", "autocast": f"autocast {dtype}"}
        xs: list[float] = []
        ys: list[float] = []
        for mode in MODES:
            pts = sorted((p for p in roofline.points if p.mode == mode), key=lambda p: p.value)
            x = np.asarray([p.intensity for p in pts], dtype=float)
            y = np.asarray([p.gflops for p in pts], dtype=float)
            keep = (x > 0) & (y > 0)
            color = style.dtype_color("float32" if mode == "plain" else dtype)
            item = self._points[mode]
            item.setData(x[keep], y[keep])
            item.setPen(pg.mkPen(color, width=1.5))
            item.setSymbolBrush(pg.mkBrush(color))
            item.setSymbolPen(pg.mkPen("w", width=1))
            self._legend.addItem(item, f"{names[mode]}, measured")
            xs += list(x[keep])
            ys += list(y[keep])
        self.fit_text()
        self._peak_data = [(p.dtype, p.gflops) for p in roofline.peaks.values() if p.gflops > 0]
        # Peaks are often close, and equal where the dtype is not native (float32's peak is
        # its ceiling): the highest peak's label goes above its line, every other one under.
        top = max(range(len(self._peak_data)), key=lambda i: self._peak_data[i][1], default=0)
        for i, line in enumerate(self._peaks):
            if i < len(self._peak_data):
                dtype_i, gflops = self._peak_data[i]
                line.show()  # first: a hidden line's label ignores setFormat
                line.setPos(math.log10(gflops))
                line.setPen(
                    pg.mkPen(style.dtype_color(dtype_i), width=2, style=Qt.PenStyle.DashLine)
                )
                line.label.setFormat(peak_label(dtype_i, gflops))
                line.label.setColor(style.dtype_color(dtype_i))
                line.label.anchors = [(0, 1), (0, 1)] if i == top else [(0, 0), (0, 0)]
                line.label.updatePosition()
            else:
                line.hide()
        ys_all = ys + [g for _d, g in self._peak_data]
        plot = self.getPlotItem()
        if ys_all and xs:
            lo_x, hi_x = min(xs), max(xs)
            pad_x = max((math.log10(hi_x) - math.log10(lo_x)) * 0.08, 0.25)
            plot.setXRange(math.log10(lo_x) - pad_x, math.log10(hi_x) + pad_x, padding=0)
            plot.getAxis("bottom").setTicks([decade_ticks(lo_x, hi_x)])
        if ys_all:
            lo_y, hi_y = min(ys_all), max(ys_all)
            plot.setYRange(math.log10(lo_y) - 0.25, math.log10(hi_y) + 0.45, padding=0)
            plot.getAxis("left").setTicks([decade_ticks(lo_y, hi_y)])
        self.set_hint("" if xs else empty)
        (x0, x1), (y0, y1) = plot.getViewBox().viewRange()
        # Above the highest peak's line and label (centred, it was crossed by a peak's line).
        top_peak = max((math.log10(g) for _d, g in self._peak_data), default=None)
        self._hint.setPos((x0 + x1) / 2, (y0 + y1) / 2 if top_peak is None else (top_peak + y1) / 2)
        style.set_title(
            plot, "Roofline: achieved vs estimated peak", source or "dashed: estimated peaks"
        )

    def fit_text(self) -> None:
        super().fit_text()
        legend = getattr(self, "_legend", None)
        if legend is None or not legend.items:
            return
        widest = max(label.boundingRect().width() for _sample, label in legend.items)
        columns = 2 if self.getPlotItem().getViewBox().width() >= 2 * (widest + 40) else 1
        if legend.columnCount != columns:
            legend.setColumnCount(columns)

    def clear(self) -> None:
        for item in self._points.values():
            item.setData(_EMPTY, _EMPTY)
        for line in self._peaks:
            line.hide()
        self._peak_data = []
        plot = self.getPlotItem()
        plot.setXRange(-1, 3, padding=0)
        plot.setYRange(-1, 3, padding=0)
        plot.getAxis("bottom").setTicks(None)
        plot.getAxis("left").setTicks(None)
        self.set_hint("Waiting for PyTorch and a measurement…")
        self._hint.setPos(1, 1)
        style.set_title(plot, "Roofline: achieved vs estimated peak", "dashed: estimated peaks")

    # ---- read-back for tests ---------------------------------------------------------------
    def drawn(self) -> dict[str, Any]:
        """Points per mode (intensity, GFLOP/s) and the peak lines (value, label)."""

        def pairs(item: pg.PlotDataItem) -> list[tuple[float, float]]:
            if item.xData is None:
                return []
            return [(float(a), float(b)) for a, b in zip(item.xData, item.yData, strict=True)]

        return {
            "plain": pairs(self._points["plain"]),
            "autocast": pairs(self._points["autocast"]),
            "peaks": [
                (10 ** line.value(), line.label.format) for line in self._peaks if line.isVisible()
            ],
            "title": self.getPlotItem().titleLabel.text,
            "hint": self._hint.toPlainText(),  # why no point is drawn; '' when some are
        }

"""The Compare window's charts: latency per run (grouped bars) and speedup per run.

Both draw core.compare's overlay series as they are; `drawn()` reads the numbers back from the
plot items so tests check what is on screen.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics

from autocast_explorer.core.experiment.certainty import SPEEDUP_MEANING
from autocast_explorer.core.experiment.pace import SPEED_CALL_WORDS, ratio_text, rough_text
from autocast_explorer.gui.charts.static_chart import StaticChart
from autocast_explorer.gui.charts.untold import bar_brush, hatch_note, hatched
from autocast_explorer.gui.charts.whiskers import whisker_ends
from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.learning.compare import Comparison, OverlaySeries

BAR_WIDTH = 0.36
OFFSET = 0.2
HEADROOM = 1.25
MAX_CPU_CHARS = 36
#: Three-line run labels (CPU / torch / threads) under each group.
AXIS_HEIGHT = 74
#: Room (px) kept between two runs' labels.
TICK_GAP_PX = 10
_EMPTY = np.zeros(0)


def run_tick(label: str) -> str:
    """'CPU · torch X · N thr (file)' as three lines, the CPU name shortened if long."""
    parts = label.split(" · ")
    if len(parts) >= 3:
        cpu = " · ".join(parts[:-2])
        if len(cpu) > MAX_CPU_CHARS:
            cpu = cpu[: MAX_CPU_CHARS - 1] + "…"
        return "\n".join((cpu, parts[-2], parts[-1]))
    return label


def fitted_ticks(labels: list[str], slot_px: float, font: QFont) -> list[tuple[int, str]]:
    """Each run's three-line tick with every line elided to its run's slot: two long CPU
    names side by side in a narrow chart were drawn over each other."""
    metrics = QFontMetrics(font)
    room = max(int(slot_px) - TICK_GAP_PX, metrics.horizontalAdvance("…") + 1)
    return [
        (
            i,
            "\n".join(
                metrics.elidedText(line, Qt.TextElideMode.ElideRight, room)
                for line in run_tick(label).split("\n")
            ),
        )
        for i, label in enumerate(labels)
    ]


class RunChart(StaticChart):
    """A chart with one slot per compared run, each labelled under the axis (fitted to the
    slot's width whenever the chart resizes or the text scale changes)."""

    _run_labels: tuple[str, ...] = ()

    def _set_run_ticks(self, labels: list[str]) -> None:
        self._run_labels = tuple(labels)
        self._fit_run_ticks()

    def _fit_run_ticks(self) -> None:
        plot = self.getPlotItem()
        axis = plot.getAxis("bottom")
        font = axis.style.get("tickFont") or QFont()
        slot = plot.getViewBox().width() / max(len(self._run_labels), 1)
        axis.setTicks([fitted_ticks(list(self._run_labels), slot, font)])

    def fit_text(self) -> None:
        super().fit_text()
        self._fit_run_ticks()


def _prepare(plot: pg.PlotItem) -> None:
    """Room for the three-line run ticks under the groups (StaticChart did the rest)."""
    plot.getAxis("bottom").setStyle(tickLength=0)
    plot.getAxis("bottom").setHeight(AXIS_HEIGHT)


def _floats(values: Any) -> list[float]:
    return [] if values is None else [float(v) for v in values]


def _ticks(plot: pg.PlotItem) -> list[str]:
    levels = plot.getAxis("bottom")._tickLevels
    return [text for _pos, text in levels[0]] if levels else []


class CompareLatencyChart(RunChart):
    """Median per forward of each run, plain and autocast side by side, p25–p75 whiskers."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            parent,
            name="compareLatencyPlot",
            tooltip=(
                "Each group is one saved run, labelled with its machine (CPU, torch, threads). "
                "Bars: median per forward, plain (float32) and autocast; whiskers: 25th–75th "
                "percentile of that run's timed blocks."
            ),
            minimum=(360, 260),
            left="ms per forward",
            grid=(False, True),
            grid_behind=True,
        )
        plot = self.getPlotItem()
        _prepare(plot)
        self._legend = plot.addLegend(offset=(-4, 4), labelTextSize="10pt")
        self._bars = pg.BarGraphItem(
            x=[], height=[], width=BAR_WIDTH, brushes=[], pen=pg.mkPen(style.TEXT, width=1)
        )
        self._errors = pg.ErrorBarItem(
            x=_EMPTY,
            y=_EMPTY,
            top=_EMPTY,
            bottom=_EMPTY,
            beam=0.1,
            pen=pg.mkPen(style.ERROR_BAR, width=2),
        )
        plot.addItem(self._bars)
        plot.addItem(self._errors)
        self._samples: dict[str, pg.BarGraphItem] = {}
        self._tallest = 0.0  # the highest whisker drawn (0: none)
        plot.getViewBox().sigResized.connect(self._fit_scale)
        self.clear()

    def show_comparison(self, comparison: Comparison) -> None:
        series = comparison.overlay()
        x, heights, tops, bottoms, brushes = [], [], [], [], []
        for i, run in enumerate(series):
            for j, (median, p25, p75, dtype) in enumerate(
                zip(run.median_ms, run.p25_ms, run.p75_ms, run.modes, strict=True)
            ):
                x.append(i + (OFFSET if j else -OFFSET))
                heights.append(median)
                tops.append(p75 - median)
                bottoms.append(median - p25)
                # A run that could not tell: its medians hatched, as the Overview draws them.
                brushes.append(bar_brush(style.dtype_color(dtype), bool(run.untold_why)))
        self._bars.setOpts(x=x, height=heights, brushes=brushes)
        notes = [hatch_note(run.label, run.untold_why) for run in series if run.untold_why]
        self.setToolTip("\n".join([self._base_tooltip, *notes]))
        self._errors.setData(
            x=np.asarray(x, dtype=float),
            y=np.asarray(heights, dtype=float),
            top=np.asarray(tops, dtype=float),
            bottom=np.asarray(bottoms, dtype=float),
        )
        self._legend.clear()
        modes = {"float32": "plain · float32"}
        for run in series:
            for dtype in run.modes[1:]:  # float32 only: that run's autocast forward raised
                modes.setdefault(dtype, f"autocast · {dtype}")
        for dtype, text in modes.items() if series else ():
            sample = self._samples.setdefault(
                dtype,
                pg.BarGraphItem(
                    x=[0],
                    height=[0],
                    width=0,
                    brush=pg.mkBrush(style.dtype_color(dtype)),
                    pen=pg.mkPen(None),
                ),
            )
            self._legend.addItem(sample, text)
        plot = self.getPlotItem()
        self._set_run_ticks([r.label for r in series])
        self._tallest = max((h + t for h, t in zip(heights, tops, strict=True)), default=0.0)
        plot.setXRange(-0.6, max(len(series), 1) - 0.4, padding=0)
        style.set_title(plot, "Latency per forward, by run", "bars: median · whiskers: p25–p75")
        self._fit_scale()

    def _fit_scale(self) -> None:
        """The y range with the legend's height, in pixels, above the highest whisker: in the
        top-right corner the legend's text was crossed by the last run's whisker."""
        view = self.getPlotItem().getViewBox()
        legend = self._legend.boundingRect().height() + 8 if self._legend.items else 0.0
        share = min(legend / view.height(), 0.6) if view.height() > 0 else 0.0
        ymax = max(self._tallest * HEADROOM, self._tallest / (1 - share)) or 1.0
        self.getPlotItem().setYRange(0, ymax, padding=0)

    def clear(self) -> None:
        self._bars.setOpts(x=[], height=[], brushes=[])
        self._errors.setData(x=_EMPTY, y=_EMPTY, top=_EMPTY, bottom=_EMPTY)
        self.setToolTip(self._base_tooltip)
        self._legend.clear()
        self._tallest = 0.0
        plot = self.getPlotItem()
        self._set_run_ticks([])
        plot.setXRange(-0.6, 0.6, padding=0)
        plot.setYRange(0, 1, padding=0)
        style.set_title(plot, "Latency per forward, by run", "add result files to compare")

    def drawn(self) -> dict[str, Any]:
        """Bar positions, heights (medians), whisker ends, colors and run labels as drawn."""
        opts = self._bars.opts
        eopts = self._errors.opts
        ys, tops, bottoms = (
            [] if eopts.get(k) is None else list(eopts[k]) for k in ("y", "top", "bottom")
        )
        return {
            "x": _floats(opts.get("x")),
            "heights": _floats(opts.get("height")),
            "whisker_top": [float(y + t) for y, t in zip(ys, tops, strict=True)],
            "whisker_bottom": [float(y - b) for y, b in zip(ys, bottoms, strict=True)],
            "colors": [pg.mkBrush(b).color().name() for b in opts.get("brushes") or []],
            "hatched": hatched(opts.get("brushes")),
            "labels": _ticks(self.getPlotItem()),
            "legend": [label.text for _s, label in self._legend.items],
        }


def _value_label(run: OverlaySeries) -> str:
    """The figure over a run's bar: '1.72×', 'about 7×', or why there is none."""
    if run.autocast_error:
        return "raised"
    if run.speedup != run.speedup:
        return "n/a"
    if not run.told:
        return SPEED_CALL_WORDS[run.call]
    if run.rough:
        return f"about {rough_text(run.speedup if run.speedup >= 1 else 1 / run.speedup)}×"
    return f"{ratio_text(run.speedup)}×"


class CompareSpeedupChart(RunChart):
    """Speedup (the paired ratio) of each run, with the break-even line at 1."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            parent,
            name="compareSpeedupPlot",
            tooltip=(
                f"Speedup of each run: {SPEEDUP_MEANING}. "
                "Above the dashed line at 1.0 autocast was faster on that machine; below it, "
                "slower."
            ),
            minimum=(300, 260),
            left="speedup (plain ÷ autocast)",
            grid=(False, True),
            grid_behind=True,
        )
        plot = self.getPlotItem()
        _prepare(plot)
        self._bars = pg.BarGraphItem(
            x=[], height=[], width=0.5, brushes=[], pen=pg.mkPen(style.TEXT, width=1)
        )
        plot.addItem(self._bars)
        self._line = pg.InfiniteLine(
            pos=1.0,
            angle=0,
            movable=False,
            pen=pg.mkPen(style.TEXT, width=2, style=Qt.PenStyle.DashLine),
        )
        plot.addItem(self._line)
        #: Each run's speedup interval (core's certainty): where it has one, a whisker.
        empty = np.array([])
        self._whiskers = pg.ErrorBarItem(
            x=empty, y=empty, top=empty, bottom=empty, pen=pg.mkPen(style.TEXT)
        )
        plot.addItem(self._whiskers)
        self._labels: list[pg.TextItem] = []
        self.clear()

    def show_comparison(self, comparison: Comparison) -> None:
        series = comparison.overlay()
        # A run that could not tell (too noisy, can't tell) gets no bar and no figure.
        shown = [r.speedup if r.told else 0.0 for r in series]
        notes = [f"No bar for {r.label}: it {r.untold_why}." for r in series if r.untold_why]
        self.setToolTip("\n".join([self._base_tooltip, *notes]))
        colors = [style.OK if s >= 1 else style.BAD for s in shown]
        self._bars.setOpts(
            x=list(range(len(series))), height=shown, brushes=[pg.mkBrush(c) for c in colors]
        )
        with_interval = [i for i, r in enumerate(series) if r.whisker]
        self._whiskers.setData(
            x=np.array(with_interval, dtype=float),
            y=np.array([shown[i] for i in with_interval], dtype=float),
            top=np.array([series[i].speedup_high - shown[i] for i in with_interval]),
            bottom=np.array([shown[i] - series[i].speedup_low for i in with_interval]),
            beam=0.2,
        )
        plot = self.getPlotItem()
        while len(self._labels) < len(series):
            item = pg.TextItem("", color=style.TEXT, anchor=(0.5, 1.0))
            item.setFont(style.chart_font(bold=True))
            plot.addItem(item)
            self._labels.append(item)
        for i, item in enumerate(self._labels):
            if i < len(series):
                item.setText(_value_label(series[i]))
                high = series[i].speedup_high if series[i].whisker else math.nan
                item.setPos(i, max(shown[i], high if high == high else 0.0))
                item.setVisible(True)
            else:
                item.setVisible(False)
        self._set_run_ticks([r.label for r in series])
        highs = [r.speedup_high for r in series if r.whisker]
        top = max([*shown, *highs, 1.0]) * HEADROOM
        plot.setXRange(-0.6, max(len(series), 1) - 0.4, padding=0)
        plot.setYRange(0, top, padding=0)
        style.set_title(
            plot,
            "Speedup, by run",
            "above the dashed line: autocast faster"
            + ("; whiskers: 95% interval" if with_interval else ""),
        )

    def clear(self) -> None:
        self._bars.setOpts(x=[], height=[], brushes=[])
        self.setToolTip(self._base_tooltip)
        empty = np.array([])
        self._whiskers.setData(x=empty, y=empty, top=empty, bottom=empty)
        for item in self._labels:
            item.setVisible(False)
        plot = self.getPlotItem()
        self._set_run_ticks([])
        plot.setXRange(-0.6, 0.6, padding=0)
        plot.setYRange(0, 1.5, padding=0)
        style.set_title(plot, "Speedup, by run", "add result files to compare")

    def drawn(self) -> dict[str, Any]:
        opts = self._bars.opts
        return {
            "speedups": _floats(opts.get("height")),
            "colors": [pg.mkBrush(b).color().name() for b in opts.get("brushes") or []],
            "labels": _ticks(self.getPlotItem()),
            "value_labels": [i.toPlainText() for i in self._labels if i.isVisible()],
            "intervals": whisker_ends(self._whiskers),
        }

"""The speedup heatmap of a batch × width grid, on a diverging color map centred at 1.0.

Columns are batch sizes, rows hidden widths (widest on top). Color is log2(speedup) on a
blue–white–red scale symmetric around 1.0: blue = autocast faster, white = even, red =
autocast slower; equal ratios (2× faster, 2× slower) get equally strong colors. The color bar
beside the grid is part of the same plot item, so an exported PNG carries it. Cells are filled
as points stream in (grey until measured); each row's crossovers (core.crossover) are marked
with ▼ at their interpolated position between two columns.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QBrush

from autocast_explorer.core.experiment.pace import SPEED_CALL_WORDS, rough_text
from autocast_explorer.core.sweeps.crossover import crossovers, format_value
from autocast_explorer.gui.charts.log_ticks import number
from autocast_explorer.gui.charts.speedup_chart import FASTER, SLOWER
from autocast_explorer.gui.charts.static_chart import StaticChart
from autocast_explorer.gui.charts.untold import bar_brush
from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.sweeps.result import SweepPoint

#: ColorBrewer RdBu, red (autocast slower) → white (even) → blue (autocast faster).
DIVERGING = ("#b2182b", "#ef8a62", "#f7f7f7", "#67a9cf", "#2166ac")
NEUTRAL = DIVERGING[2]
UNMEASURED = "#d9dce0"
#: A measured cell whose call could not tell (too noisy, can't tell): hatched, no figure.
UNTOLD = "#9aa0a6"
#: The color scale spans at least 2× either way (noise around 1.0 stays pale) and at most 8×
#: (one stalled point must not wash out every other cell; beyond it colors saturate).
MIN_LIMIT_LOG2 = 1.0
MAX_LIMIT_LOG2 = 3.0
#: Values are written in the cells while the grid is at most this many columns × rows.
MAX_LABELLED = (12, 10)
#: Crossover marks (▼) sit at the top edge of their row, clear of the value in the cell.
MARK_OFFSET = 0.36
COLOR_MAP = pg.ColorMap(np.linspace(0.0, 1.0, len(DIVERGING)), list(DIVERGING))


def _brush(cell: HeatCell) -> QBrush:
    """The cell's fill: its color, hatched where the point could not tell."""
    return bar_brush(cell.color, bool(cell.untold))


def color_limit(speedups: Sequence[float]) -> float:
    """Half-width of the color scale in log2 units: the largest |log2 speedup| in ½ steps,
    between MIN_LIMIT_LOG2 and MAX_LIMIT_LOG2."""
    logs = [abs(math.log2(s)) for s in speedups if math.isfinite(s) and s > 0]
    wanted = math.ceil(max(logs, default=0.0) * 2) / 2
    return min(MAX_LIMIT_LOG2, max(MIN_LIMIT_LOG2, wanted))


def cell_text(speedup: float) -> str:
    """'0.87', '1.62'; two significant digits far from 1 ('0.0014', '12')."""
    return f"{speedup:.2f}" if 0.1 <= speedup < 10 else f"{speedup:.2g}"


def ratio_label(k: int, limit: float) -> str:
    """Color-bar tick at log2 = k: '1×', '2×', '1/4×'; '≥8×' / '≤1/8×' at a saturated end."""
    text = "1×" if k == 0 else f"{2**k}×" if k > 0 else f"1/{2**-k}×"
    if abs(k) >= limit and limit >= MAX_LIMIT_LOG2:
        text = ("≥" if k > 0 else "≤") + text
    return text


def speedup_color(speedup: float, limit: float) -> str:
    """The cell color of `speedup` on a scale of ±`limit` (log2 units) around 1.0."""
    if not (math.isfinite(speedup) and speedup > 0):
        return UNMEASURED
    t = 0.5 + 0.5 * max(-1.0, min(1.0, math.log2(speedup) / limit))
    return COLOR_MAP.map(t, mode=pg.ColorMap.QCOLOR).name()


@dataclass(frozen=True)
class HeatCell:
    """One drawn cell: grid position, the measured speedup (NaN: not yet), its color and text."""

    width: int
    batch: int
    speedup: float
    color: str
    text: str
    plain_ms: float
    autocast_ms: float
    #: The point's 95% interval as the other views word it (' (95%: 1.66–1.79)'; '' for none).
    interval: str = ""
    #: The point's call was "too noisy to tell" (its figure is then not a finding).
    too_noisy: bool = False
    #: "too noisy to tell" or "can't tell" when the point's call states no figure, else ''.
    untold: str = ""
    #: Why the point's factor is rough ("the paired timings varied widely"), else ''.
    rough: str = ""

    @property
    def tooltip(self) -> str:
        if not math.isfinite(self.speedup):
            return f"batch {self.batch} × width {self.width}: not measured yet"
        if self.untold:
            return (
                f"batch {self.batch} × width {self.width}: {self.untold} (medians: float32 "
                f"{self.plain_ms:.4g} ms, autocast {self.autocast_ms:.4g} ms)"
            )
        words = "faster" if self.speedup >= 1 else "slower"
        factor = self.speedup if self.speedup >= 1 else 1 / self.speedup
        if self.rough:
            return (
                f"batch {self.batch} × width {self.width}: autocast about "
                f"{rough_text(factor)}× {words} ({self.rough}, so the factor is uncertain; "
                f"float32 {self.plain_ms:.4g} ms, autocast {self.autocast_ms:.4g} ms)"
            )
        return (
            f"batch {self.batch} × width {self.width}: speedup {self.speedup:.2f}×"
            f"{self.interval} (autocast {factor:.2f}× {words}; float32 "
            f"{self.plain_ms:.4g} ms, autocast {self.autocast_ms:.4g} ms)"
        )


class SpeedupHeatmap(StaticChart):
    """objectName `speedupHeatmap`; `begin(batches, widths)`, `show_points`, `clear`."""

    def __init__(self, parent: Any = None) -> None:
        base_tooltip = (
            "Speedup (float32 ÷ autocast) for every batch × hidden width. Blue: autocast "
            "faster; white: even (1.0); red: autocast slower. ▼ marks where a row's speedup "
            "crosses 1.0. Hover a cell for its numbers."
        )
        super().__init__(
            parent,
            name="speedupHeatmap",
            tooltip=base_tooltip,
            minimum=(360, 260),
            left="hidden width",
            bottom="batch (rows per forward)",
            tick_length=0,
            hover=True,
        )
        plot = self.getPlotItem()
        self._cells_item = pg.BarGraphItem(
            x0=[], y0=[], width=[], height=[], brushes=[], pen=pg.mkPen("w", width=2)
        )
        plot.addItem(self._cells_item)
        self._marks = pg.ScatterPlotItem(
            symbol="t", size=15, brush=pg.mkBrush(style.TEXT), pen=pg.mkPen("w", width=1.5)
        )
        self._marks.setZValue(10)
        plot.addItem(self._marks)
        self._bar = pg.ColorBarItem(
            values=(-MIN_LIMIT_LOG2, MIN_LIMIT_LOG2),
            colorMap=COLOR_MAP,
            interactive=False,
            colorMapMenu=False,
            width=18,
            label="speedup (log₂ scale)",
        )
        self._bar.setImageItem([], insert_in=plot)
        self._bar.axis.setTickFont(style.chart_font(10))
        self._bar.getAxis("left").label.setFont(style.chart_font(10))
        self._texts: list[pg.TextItem] = []
        self._hint = pg.TextItem("Choose batch × width grid", color=style.MUTED, anchor=(0.5, 0.5))
        self._hint.setFont(style.chart_font())
        plot.addItem(self._hint)
        self._batches: tuple[int, ...] = ()
        self._widths: tuple[int, ...] = ()
        self._cells: list[HeatCell] = []
        self._marks_drawn: list[tuple[int, float, float]] = []
        self._limit = MIN_LIMIT_LOG2
        self.clear()

    # ---- drawing ---------------------------------------------------------------------------
    def begin(self, batches: Sequence[int], widths: Sequence[int]) -> None:
        """A new grid: every cell grey, axes labelled with the values to be measured."""
        self._batches, self._widths = tuple(batches), tuple(widths)
        plot = self.getPlotItem()
        plot.getAxis("bottom").setTicks([[(i, number(b)) for i, b in enumerate(batches)]])
        plot.getAxis("left").setTicks([[(j, number(w)) for j, w in enumerate(widths)]])
        plot.setXRange(-0.5, len(batches) - 0.5, padding=0)
        plot.setYRange(-0.5, len(widths) - 0.5, padding=0)
        self.set_hint("")
        self.show_points([])

    def show_points(self, points: Sequence[SweepPoint]) -> None:
        """Color the measured cells; the rest stay grey. Crossovers per row, from core."""
        by_cell = {(p.value2, p.value): p for p in points}
        self._limit = color_limit([p.told_speedup for p in points])
        labelled = len(self._batches) <= MAX_LABELLED[0] and len(self._widths) <= MAX_LABELLED[1]
        cells: list[HeatCell] = []
        for width in self._widths:
            for batch in self._batches:
                p = by_cell.get((width, batch))
                cells.append(self._cell(width, batch, p, labelled))
        self._cells = cells
        col = {b: i for i, b in enumerate(self._batches)}
        row = {w: j for j, w in enumerate(self._widths)}
        self._cells_item.setOpts(
            x0=[col[c.batch] - 0.5 for c in cells],
            y0=[row[c.width] - 0.5 for c in cells],
            width=[1.0] * len(cells),
            height=[1.0] * len(cells),
            brushes=[_brush(c) for c in cells],
        )
        self._draw_texts(cells, col, row)
        self._draw_marks(by_cell)
        self._update_bar()
        measured = sum(1 for c in cells if math.isfinite(c.speedup))
        second = (
            f"<span style='color:{FASTER}'>blue: faster</span> · "
            f"<span style='color:{SLOWER}'>red: slower</span> · ▼ crossover"
        )
        first = "Speedup, batch × hidden width"
        if cells and measured < len(cells):
            first += f" ({measured}/{len(cells)} measured)"
        style.set_title(self.getPlotItem(), first, second)

    def _cell(self, width: int, batch: int, p: SweepPoint | None, labelled: bool) -> HeatCell:
        """One cell: colored by its speedup, or hatched grey with '?' and no figure when the
        point's call could not tell (the same call as a run's headline)."""
        s = p.speedup if p is not None else math.nan
        call = p.call if p is not None else None
        untold = SPEED_CALL_WORDS[call.kind] if call is not None and not call.graded else ""
        text = "?" if untold else cell_text(s) if math.isfinite(s) else ""
        rough = call.rough if call is not None else ""
        if rough:
            text = f"≈{text}"
        return HeatCell(
            width=width,
            batch=batch,
            speedup=s,
            color=UNTOLD if untold else speedup_color(s, self._limit),
            text=text if labelled else "",
            plain_ms=p.plain.median_ms if p is not None else math.nan,
            autocast_ms=p.autocast.median_ms if p is not None else math.nan,
            interval=call.interval_text() if call is not None and not untold else "",
            too_noisy=call is not None and call.too_noisy,
            untold=untold,
            rough=rough,
        )

    def _draw_texts(self, cells: list[HeatCell], col: dict, row: dict) -> None:
        plot = self.getPlotItem()
        while len(self._texts) < len(cells):
            item = pg.TextItem("", anchor=(0.5, 0.5))
            item.setFont(style.chart_font(10, bold=True))
            item.setZValue(5)
            plot.addItem(item)
            self._texts.append(item)
        for i, item in enumerate(self._texts):
            if i < len(cells) and cells[i].text:
                cell = cells[i]
                strong = (
                    not cell.untold and min(abs(math.log2(cell.speedup)) / self._limit, 1.0) > 0.55
                )
                item.setColor("w" if strong else style.TEXT)
                item.setText(cell.text)
                item.setPos(col[cell.batch], row[cell.width])
                item.show()
            else:
                item.setText("")
                item.hide()

    def _draw_marks(self, by_cell: dict) -> None:
        """A ▼ at each crossing, between the two columns it lies between (log interpolation)."""
        marks: list[tuple[int, float, float]] = []
        logs = [math.log(b) for b in self._batches]
        for width in self._widths:
            row = [
                (b, by_cell[(width, b)].speedup)
                for b in self._batches
                if (width, b) in by_cell and by_cell[(width, b)].call.graded
            ]
            if len(row) < 2:
                continue
            for value in crossovers([b for b, _ in row], [s for _, s in row]):
                at = math.log(value)
                i = min(sum(1 for lv in logs if lv <= at) - 1, len(logs) - 2)
                i = max(i, 0)
                marks.append((width, value, i + (at - logs[i]) / (logs[i + 1] - logs[i])))
        self._marks_drawn = marks
        row_of = {w: j for j, w in enumerate(self._widths)}
        self._marks.setData(
            x=[x for _w, _v, x in marks],
            y=[row_of[w] + MARK_OFFSET for w, _v, _x in marks],
            data=[f"width {w}: crosses 1.0 at batch ≈ {format_value(v)}" for w, v, _x in marks],
        )

    def _update_bar(self) -> None:
        limit = self._limit
        self._bar.setLevels((-limit, limit))
        top = math.floor(limit)
        self._bar.axis.setTicks([[(float(k), ratio_label(k, limit)) for k in range(-top, top + 1)]])

    def clear(self) -> None:
        self._batches, self._widths = (), ()
        self._cells = []
        self._cells_item.setOpts(x0=[], y0=[], width=[], height=[], brushes=[])
        for item in self._texts:
            item.setText("")
            item.hide()
        self._marks.setData(x=[], y=[])
        self._marks_drawn = []
        self._limit = MIN_LIMIT_LOG2
        self._update_bar()
        plot = self.getPlotItem()
        plot.getAxis("bottom").setTicks([[]])  # no grid yet: no numbers that mean nothing
        plot.getAxis("left").setTicks([[]])
        plot.setXRange(-0.5, 3.5, padding=0)
        plot.setYRange(-0.5, 2.5, padding=0)
        self.set_hint("Run sweep (F6)")
        self._hint.setPos(1.5, 1.0)
        style.set_title(plot, "Speedup, batch × hidden width", "blue: faster · red: slower")

    # ---- tooltip ---------------------------------------------------------------------------
    def cell_at(self, x: float, y: float) -> HeatCell | None:
        col, row = round(x), round(y)
        if not (0 <= col < len(self._batches) and 0 <= row < len(self._widths)):
            return None
        return self._cells[row * len(self._batches) + col] if self._cells else None

    def tooltip_at(self, x: float, y: float) -> str | None:
        cell = self.cell_at(x, y)
        return cell.tooltip if cell else None

    # ---- read-back for tests ---------------------------------------------------------------
    def cells(self) -> list[HeatCell]:
        """Every cell as drawn, row by row (smallest width first), batch left to right."""
        return list(self._cells)

    def drawn_colors(self) -> list[str]:
        """The brush of every cell, read from the plot item."""
        return [pg.mkBrush(b).color().name() for b in self._cells_item.opts.get("brushes") or []]

    def cell_texts(self) -> list[str]:
        return [item.toPlainText() for item in self._texts if item.isVisible()]

    def crossover_marks(self) -> list[tuple[int, float, float]]:
        """(row width, crossing batch, x position in column units) of every ▼ drawn."""
        xs = [float(p.pos().x()) for p in self._marks.points()]
        return [(w, v, x) for (w, v, _x), x in zip(self._marks_drawn, xs, strict=True)]

    def color_bar(self) -> dict[str, Any]:
        """The color bar's levels (log2 units) and its tick labels."""
        levels = self._bar.levels()
        ticks = self._bar.axis._tickLevels
        return {
            "levels": (float(levels[0]), float(levels[1])),
            "ticks": [label for _pos, label in (ticks[0] if ticks else [])],
            "low_color": COLOR_MAP.map(0.0, mode=pg.ColorMap.QCOLOR).name(),
            "mid_color": COLOR_MAP.map(0.5, mode=pg.ColorMap.QCOLOR).name(),
            "high_color": COLOR_MAP.map(1.0, mode=pg.ColorMap.QCOLOR).name(),
        }

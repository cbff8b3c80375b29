"""Which layers break it: each row's one-in sensitivity, most damaging first, with its share of
the forward's time beside it and the first divergent row marked.

A bar is the criterion's measure when only that row runs in lower precision (core's locator:
`plan.sensitivity[i].one_in`); its colour says whether that alone still meets the criterion,
whose threshold is the dashed line. The rows come in core's order of damage
(`core.planning.words.ranked_rows`); the column on the right gives each row's share of the
forward's time in float32 and in the lower dtype, so a damaging row that costs little time is
the one to keep in float32. `drawn()` reads the plot items back for tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics

from autocast_explorer.core.planning.criterion import parse_criterion
from autocast_explorer.core.planning.words import ranked_rows, value_text
from autocast_explorer.gui.charts.static_chart import StaticChart
from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.planning.criterion import Criterion
    from autocast_explorer.core.planning.document import PlanDocument, SensitivityRow

#: Rows drawn at most and at least (the most damaging; the first divergent row always among
#: them): as many as the chart's height holds at ROW_LINES tick-label lines each.
MAX_ROWS = 10
MIN_ROWS = 1
ROW_LINES = 1.25
#: A plan's chart grows by this much (px at 100% text) for each row past the few its
#: minimum holds, so that its rows are drawn wherever the page can scroll to them.
ROW_PX = 26
ROWS_IN_MINIMUM = 2
BAR_HEIGHT = 0.62
#: Characters of a row's name on the axis; longer names keep their end (the tooltip has all).
NAME_CHARS = 20
#: Pixels between a bar's end and its value, and between the columns.
GAP_PX = 6
#: Below this many pixels for the bars themselves, values are left to the tooltips.
MIN_BAR_PX = 160
IDLE_HINT = "Find plan (above) ranks every layer by the damage it does alone"
MARK = "▶ "
#: The bottom axis's caption, the same for every criterion (the values carry the unit): a
#: caption set anew would not be wrapped to the chart's width until its next resize.
CAPTION = "the criterion's measure with only this row lowered"


@dataclass(frozen=True)
class SensitivityBar:
    """One drawn row: core's measurements and what was drawn for them."""

    row: SensitivityRow
    start: float
    end: float
    met: bool | None
    marked: bool
    label: str
    time_text: str
    color: str
    leave_out_text: str

    @property
    def name(self) -> str:
        return self.row.name

    @property
    def tooltip(self) -> str:
        row = self.row
        return "\n".join(
            (
                row.name + (" — the first divergent row" if self.marked else ""),
                f"only this row lowered (one-in): {self.label}",
                f"only this row kept in float32 (leave-out): {self.leave_out_text}",
                f"share of the forward's time, float32 → lower: {self.time_text}",
            )
        )


def axis_name(name: str) -> str:
    """A row's name as the axis shows it: the end of a long path, whole parts of it
    ('…layers.2.linear1'), or its last characters when even one part is too long."""
    if len(name) <= NAME_CHARS:
        return name
    parts = name.split(".")
    while len(parts) > 1 and len(".".join(parts)) > NAME_CHARS - 1:
        parts.pop(0)
    end = ".".join(parts)
    return "…" + (end if len(end) < NAME_CHARS else end[-(NAME_CHARS - 1) :])


def share_text(plain: float | None, lower: float | None) -> str:
    """'12% → 9%': the row's share of the forward's time in float32, then in the lower dtype
    (a side not measured: '—')."""

    def one(value: float | None) -> str:
        return "—" if value is None or math.isnan(value) else f"{100 * value:.0f}%"

    return f"{one(plain)} → {one(lower)}"


def shown_rows(plan: PlanDocument, count: int = MAX_ROWS) -> list[SensitivityRow]:
    """The `count` most damaging rows, the first divergent one in place of the last if it
    would not be among them."""
    ranked = list(ranked_rows(plan))
    shown = ranked[:count]
    marked = plan.first_divergent
    if marked and all(row.name != marked for row in shown):
        extra = [row for row in ranked if row.name == marked]
        shown = shown[: count - 1] + extra
    return shown


def _edges(criterion: Criterion, rows: list[SensitivityRow]) -> tuple[float, float]:
    """(base, top): where bars start, and the largest finite end (the threshold included)."""
    values = [r.one_in for r in rows if r.one_in is not None and math.isfinite(r.one_in)] + [
        criterion.threshold
    ]
    low, high = min(values), max(values)
    span = high - low or max(abs(high) * 0.05, 1.0)
    return low - 0.25 * span, high


class _BoundedAxis(pg.AxisItem):
    """A bottom axis with no ticks past `limit`: the time column right of the bars has none."""

    limit = math.inf

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list:
        levels = super().tickValues(minVal, maxVal, size)
        return [
            (spacing, [v for v in values if v <= self.limit + 1e-9]) for spacing, values in levels
        ]


class SensitivityChart(StaticChart):
    """objectName `sensitivityChart`: `show_plan(plan)`, `clear()`, `bars()`, `drawn()`."""

    MINIMUM = (300, 240)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            parent,
            name="sensitivityChart",
            tooltip=(
                "Each row's damage when it alone runs in lower precision (one-in), most "
                "damaging at the top; the dashed line is the criterion. Right: the row's share "
                "of the forward's time in float32 and in the lower dtype. ▶ marks the first "
                "row where the error jumps. Hover a bar for its leave-out figure."
            ),
            minimum=self.MINIMUM,
            grid=(True, False),
            grid_behind=True,
            hover=True,
        )
        plot = self.getPlotItem()
        self._axis = _BoundedAxis("bottom")
        plot.setAxisItems({"bottom": self._axis})
        plot.setLabel("bottom", CAPTION)
        self._axis.setTickFont(style.chart_font())
        self._axis.label.setFont(style.chart_font(10))
        self._axis.enableAutoSIPrefix(False)
        style.fit_tick_labels(plot)
        plot.getViewBox().invertY(True)
        self._bars_item = pg.BarGraphItem(x0=[], y=[], width=[], height=BAR_HEIGHT, brushes=[])
        plot.addItem(self._bars_item)
        self._threshold = pg.InfiniteLine(
            angle=90, pen=pg.mkPen(style.TEXT, width=1.5, style=Qt.PenStyle.DashLine)
        )
        self._threshold.hide()
        plot.addItem(self._threshold)
        self._values = [self._text(anchor=(0.0, 0.5)) for _ in range(MAX_ROWS)]
        self._times = [self._text(anchor=(0.0, 0.5)) for _ in range(MAX_ROWS)]
        self._header = self._text(anchor=(0.0, 1.0), color=style.MUTED)
        self._hint = self._text(anchor=(0.5, 0.5), color=style.MUTED, size=style.CHART_FONT_PT)
        self._hint.setText(IDLE_HINT)
        self._bars: list[SensitivityBar] = []
        self._plan: PlanDocument | None = None
        self._redrawing = False
        self._top = 1.0
        self.clear()

    def _text(
        self, anchor: tuple[float, float], color: str = style.TEXT, size: int = 10
    ) -> pg.TextItem:
        item = pg.TextItem("", color=color, anchor=anchor)
        item.setFont(style.chart_font(size))
        self.getPlotItem().addItem(item)
        return item

    # ---- drawing ---------------------------------------------------------------------------
    def show_plan(self, plan: PlanDocument) -> None:
        """Draw the plan's sensitivity rows, as many of the most damaging as the chart's height
        holds readably (a plan without any: the hint says so)."""
        if not plan.sensitivity:
            self.clear()
            self.set_hint("This plan has no per-layer sensitivity")
            return
        self._plan = plan
        self._grow_for(min(len(plan.sensitivity), MAX_ROWS))
        self._draw(plan, self._rows_that_fit())

    def _grow_for(self, rows: int) -> None:
        """A minimum tall enough for `rows` rows (the bare minimum without a plan: a lesson
        frames the empty chart in a short page)."""
        extra = ROW_PX * max(0, rows - ROWS_IN_MINIMUM)
        scale = getattr(self.getPlotItem(), "font_scale", 1.0)
        style.set_chart_minimum(self, (self.MINIMUM[0], self.MINIMUM[1] + extra), scale)

    def _rows_that_fit(self) -> int:
        """Rows whose names the left axis can print one under the other (pyqtgraph leaves out
        labels that would overlap): MIN_ROWS to MAX_ROWS."""
        axis = self.getPlotItem().getAxis("left")
        line = QFontMetrics(axis.style.get("tickFont") or self.font()).height() * ROW_LINES
        room = self.getPlotItem().getViewBox().height() - self._header_px()
        return max(MIN_ROWS, min(MAX_ROWS, int(room // max(line, 1.0))))

    def _header_px(self) -> float:
        return self._header.textItem.boundingRect().height() + GAP_PX

    def _draw(self, plan: PlanDocument, count: int) -> None:
        criterion = parse_criterion(plan.criterion)
        rows = shown_rows(plan, count)
        base, top = _edges(criterion, rows)
        bars = [self._bar(row, criterion, base, top, plan.first_divergent) for row in rows]
        self._bars, self._top = bars, max([top, *(b.end for b in bars)])
        self._axis.limit = self._top
        self._bars_item.setOpts(
            x0=[b.start for b in bars],
            y=list(range(len(bars))),
            width=[b.end - b.start for b in bars],
            brushes=[pg.mkBrush(b.color) for b in bars],
            pens=[
                pg.mkPen(style.BAD if b.marked else style.TEXT, width=3 if b.marked else 1)
                for b in bars
            ],
        )
        self._threshold.setValue(criterion.threshold)
        self._threshold.show()
        plot = self.getPlotItem()
        ticks = [(i, (MARK if b.marked else "") + axis_name(b.name)) for i, b in enumerate(bars)]
        plot.getAxis("left").setTicks([ticks])
        self._axis.setTicks(None)  # automatic again
        for i, item in enumerate(self._values):
            item.setText(bars[i].label if i < len(bars) else "")
        for i, item in enumerate(self._times):
            item.setText(bars[i].time_text if i < len(bars) else "")
        self._header.setText(f"time share\nfp32 → {style.dtype_short(plan.config.dtype)}")
        self.set_hint("")
        total = len(plan.sensitivity)
        marked = plan.first_divergent or "none"
        counted = (
            f"{len(bars)} most damaging of {total} rows" if total > len(bars) else f"{total} rows"
        )
        style.set_title(
            plot,
            "Which layers break it",
            f"{criterion} (dashed) · ▶&nbsp;first&nbsp;divergent: <b>{marked}</b> · {counted}",
        )
        self.fit_text()

    def _bar(
        self,
        row: SensitivityRow,
        criterion: Criterion,
        base: float,
        top: float,
        first_divergent: str | None,
    ) -> SensitivityBar:
        value = row.one_in
        met: bool | None = None
        if value is None or math.isnan(value):
            end = base
        else:
            end = top + (top - base) * 0.08 if value == math.inf else max(value, base)
            met = criterion.met(value)
        color = {True: style.OK, False: style.BAD, None: style.UNKNOWN_DTYPE_COLOR}[met]
        return SensitivityBar(
            row=row,
            start=base,
            end=end,
            met=met,
            marked=row.name == first_divergent,
            label=value_text(criterion, value),
            time_text=share_text(row.time_share_plain, row.time_share_lower),
            color=color,
            leave_out_text=value_text(criterion, row.leave_out),
        )

    def clear(self) -> None:
        self._bars = []
        self._plan = None
        self._grow_for(0)
        self._axis.limit = math.inf
        self._bars_item.setOpts(x0=[], y=[], width=[], brushes=[], pens=None, pen=style.TEXT)
        self._threshold.hide()
        for item in (*self._values, *self._times, self._header):
            item.setText("")
        plot = self.getPlotItem()
        plot.getAxis("left").setTicks([[]])
        self._axis.setTicks([[]])  # no scale without bars
        plot.setXRange(0, 1, padding=0)
        plot.setYRange(0, 1, padding=0)
        self._hint.setPos(0.5, 0.5)
        self.set_hint(IDLE_HINT)
        style.set_title(plot, "Which layers break it", "one row lowered at a time")

    def fit_text(self) -> None:
        """Show as many rows as the height holds, and lay the value labels and the time column
        out in pixels: the bars get what is left."""
        super().fit_text()
        if not getattr(self, "_bars", None):
            return
        plan = self._plan
        wanted = min(self._rows_that_fit(), len(plan.sensitivity)) if plan else len(self._bars)
        if plan is not None and wanted != len(self._bars) and not self._redrawing:
            self._redrawing = True  # one redraw per resize: its own fit_text lays it out
            try:
                self._draw(plan, wanted)
            finally:
                self._redrawing = False
            return
        view = self.getPlotItem().getViewBox()
        rows = len(self._bars)
        header_px = self._header_px()
        per_row_px = rows / max(view.height() - header_px, 1.0)
        self.getPlotItem().setYRange(-0.5 - header_px * per_row_px, rows - 0.5, padding=0)
        width_px = max(view.width(), 1.0)
        time_px = max(t.textItem.boundingRect().width() for t in (*self._times, self._header))
        value_px = max(v.textItem.boundingRect().width() for v in self._values)
        show_values = width_px - time_px - value_px - 3 * GAP_PX >= MIN_BAR_PX
        reserve = time_px + 2 * GAP_PX + (value_px + GAP_PX if show_values else 0)
        base = self._bars[0].start
        per_px = (self._top - base) / max(width_px - reserve, 1.0)
        right = self._top + reserve * per_px
        self.getPlotItem().setXRange(base, right, padding=0)
        column = right - (time_px + GAP_PX) * per_px
        for i, bar in enumerate(self._bars):
            self._values[i].setPos(bar.end + GAP_PX * per_px, i)
            self._values[i].setVisible(show_values)
            self._times[i].setPos(column, i)
        self._header.setPos(column, -0.5)

    # ---- reading back ----------------------------------------------------------------------
    def bars(self) -> list[SensitivityBar]:
        return list(self._bars)

    def bar_at(self, x: float, y: float) -> SensitivityBar | None:
        """The row under data point (x, y): anywhere along its bar's line."""
        i = round(y)
        if not 0 <= i < len(self._bars) or abs(y - i) > BAR_HEIGHT / 2:
            return None
        return self._bars[i]

    def tooltip_at(self, x: float, y: float) -> str | None:
        bar = self.bar_at(x, y)
        return bar.tooltip if bar else None

    def drawn(self) -> dict[str, Any]:
        """What the plot items hold: each bar's row and end (its value), colour and mark, the
        time column, the threshold and the title."""
        opts = self._bars_item.opts
        starts = list(opts.get("x0") or [])
        widths = list(opts.get("width") or [])
        levels = self.getPlotItem().getAxis("left")._tickLevels
        return {
            "names": [b.name for b in self._bars],
            "values": [
                float(s + w) if w > 0 else None for s, w in zip(starts, widths, strict=True)
            ],
            "labels": [item.toPlainText() for item in self._values[: len(self._bars)]],
            "colors": [pg.mkBrush(b).color().name() for b in opts.get("brushes") or []],
            "marked": next((b.name for b in self._bars if b.marked), None),
            "time_shares": [item.toPlainText() for item in self._times[: len(self._bars)]],
            "threshold": self._threshold.value() if self._threshold.isVisible() else None,
            "ticks": [text for _pos, text in (levels[0] if levels else [])],
            "hint": self._hint.toPlainText(),
            "title": self.getPlotItem().titleLabel.text,
        }

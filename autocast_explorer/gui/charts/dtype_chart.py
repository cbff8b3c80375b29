"""Dtype per layer: a grid with the layers along x and one row per mode.

Each cell is colored by the dtype the layer's output really had in that mode (measured by
core's wrapped forwards) and labelled in → out. A layer whose ops computed in another dtype
than it returned (a GRU under autocast: bfloat16 matrix products, float32 output) is drawn as
a mixed cell: a stripe along its bottom in the color of the other dtype most of its ops ran
in, and a second label line. Hovering a cell gives core's full sentence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QSizePolicy

from autocast_explorer.gui.charts.layer_ticks import layer_ticks
from autocast_explorer.gui.charts.static_chart import LEGEND_ROW, StaticChart
from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.numerics.compute import ComputeDtypes

#: Cell labels are drawn only while they fit; the colors and tooltips always are.
MAX_LABELLED_LAYERS = 14
#: …and while each cell is this wide on screen (px): 'fp32→bf16' needs about this much.
LABEL_MIN_SLOT_PX = 90
CELL_WIDTH = 0.92
CELL_HEIGHT = 0.8
#: The share of a mixed cell's height its compute-dtype stripe takes (at the bottom).
STRIPE_HEIGHT = 0.3
#: The stripe's inset from the cell's edges (data units).
STRIPE_INSET = 0.04
#: The y range shown: both rows (the legend is a row of its own under the axis).
Y_RANGE = (-0.5, 1.5)
MODES = ("plain", "autocast")
#: Row of each mode on the y axis: plain on top.
MODE_ROW = {"plain": 1, "autocast": 0}
#: What a cell says for a layer the autocast forward never reached (it raised first).
NOT_RUN = "did not run"


@dataclass(frozen=True)
class Cell:
    """One drawn cell: which layer and mode, the measured dtypes, the color used."""

    layer: str
    kind: str
    mode: str
    in_dtype: str
    out_dtype: str
    color: str
    compute: str = ""  # core's sentence of what the ops ran in ('' when not traced)
    compute_dtype: str = ""  # a mixed cell: the dtype most ops ran in besides out_dtype

    @property
    def mixed(self) -> bool:
        return bool(self.compute_dtype)

    @property
    def label(self) -> str:
        if self.out_dtype == NOT_RUN:
            return "—"
        text = f"{style.dtype_short(self.in_dtype)}→{style.dtype_short(self.out_dtype)}"
        if self.mixed:
            text += f"\n{style.dtype_short(self.compute_dtype)} inside"
        return text

    @property
    def tooltip(self) -> str:
        if self.out_dtype == NOT_RUN:
            return (
                f"{self.layer} ({self.kind}), {self.mode}: did not run, the autocast forward "
                "raised before this layer"
            )
        text = f"{self.layer} ({self.kind}), {self.mode}: {self.in_dtype} → {self.out_dtype}"
        if self.compute:
            text += f"\ncomputed in: {self.compute}"
        return text


def inner_dtype(compute: ComputeDtypes | None, out_dtype: str) -> str:
    """The dtype most of a layer's ops ran in other than the one it returned ('' if none):
    the stripe marks what differs from the cell's color, even when most ops ran in that one."""
    if compute is None:
        return ""
    return next((dtype for dtype in compute.dtypes if dtype != out_dtype), "")


class DtypeChart(StaticChart):
    """A result view: `show_result(result)` and `clear()`; objectName `dtypePlot`."""

    def __init__(self, parent: Any = None) -> None:
        base_tooltip = (
            "The dtype each layer produced, measured by wrapping each layer's forward: top row "
            "without autocast, bottom row under torch.autocast('cpu'). A stripe along a cell's "
            "bottom marks a layer whose ops ran in another dtype than it returned (its color). "
            "Hover a cell for in → out and the ops."
        )
        super().__init__(
            parent,
            name="dtypePlot",
            tooltip=base_tooltip,
            minimum=(300, 210),
            label_pt=None,
            tick_length=0,
            hover=True,
        )
        plot = self.getPlotItem()
        style.set_title(
            plot, "Dtype per layer · color: output · stripe: maths inside · text: in → out"
        )
        # The legend is a row under the axis: inside the plot it sat on the plain row's cells
        # wherever the chart was short (large text, a narrow window).
        self._legend = pg.LegendItem(colCount=4, labelTextSize="10pt")
        self._legend.layout.setContentsMargins(2, 0, 2, 0)  # one line high, not a box
        plot.layout.addItem(self._legend, LEGEND_ROW, 1)
        # As wide as its entries, centred under the cells (not spread across the row).
        self._legend.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Maximum)
        plot.layout.setAlignment(self._legend, Qt.AlignmentFlag.AlignHCenter)
        self._legend_samples: dict[str, pg.BarGraphItem] = {}
        self._cells_item = pg.BarGraphItem(
            x0=[], y0=[], width=[], height=[], brushes=[], pen=pg.mkPen("w", width=2)
        )
        plot.addItem(self._cells_item)
        self._stripes_item = pg.BarGraphItem(
            x0=[], y0=[], width=[], height=[], brushes=[], pen=pg.mkPen(None)
        )
        plot.addItem(self._stripes_item)
        self._labels: list[pg.TextItem] = []
        self._label_cells: list[Cell | None] = []  # the cell behind each label
        self._cells: list[Cell] = []
        self._layer_count = 0
        self._index: dict[str, int] = {}
        self.clear()

    # ---- result view ---------------------------------------------------------------------
    def show_result(self, result: ExperimentResult) -> None:
        cells: list[Cell] = []
        for layer in result.layers:
            for mode in MODES:
                d = layer.plain if mode == "plain" else layer.autocast
                if d is None:  # the autocast forward raised before this layer
                    cells.append(
                        Cell(layer.name, layer.kind, mode, "", NOT_RUN, style.UNKNOWN_DTYPE_COLOR)
                    )
                    continue
                compute = d.compute
                cells.append(
                    Cell(
                        layer=layer.name,
                        kind=layer.kind,
                        mode=mode,
                        in_dtype=d.in_dtype,
                        out_dtype=d.out_dtype,
                        color=style.dtype_color(d.out_dtype),
                        compute=compute.summary(d.out_dtype) if compute is not None else "",
                        compute_dtype=inner_dtype(compute, d.out_dtype),
                    )
                )
        self._draw(cells, [layer.name for layer in result.layers], result.config.dtype)

    def clear(self) -> None:
        self._draw([], [], None)

    def _draw(self, cells: list[Cell], layer_names: list[str], autocast_dtype: str | None) -> None:
        self._cells = cells
        self._layer_count = len(layer_names)
        index = {name: i for i, name in enumerate(layer_names)}
        self._index = index
        self._cells_item.setOpts(
            x0=[index[c.layer] - CELL_WIDTH / 2 for c in cells],
            y0=[MODE_ROW[c.mode] - CELL_HEIGHT / 2 for c in cells],
            width=[CELL_WIDTH] * len(cells),
            height=[CELL_HEIGHT] * len(cells),
            brushes=[pg.mkBrush(c.color) for c in cells],
        )
        stripes = [c for c in cells if c.mixed]
        inset = STRIPE_INSET
        self._stripes_item.setOpts(
            x0=[index[c.layer] - CELL_WIDTH / 2 + inset for c in stripes],
            y0=[MODE_ROW[c.mode] - CELL_HEIGHT / 2 + inset for c in stripes],
            width=[CELL_WIDTH - 2 * inset] * len(stripes),
            height=[CELL_HEIGHT * STRIPE_HEIGHT] * len(stripes),
            brushes=[pg.mkBrush(style.dtype_color(c.compute_dtype)) for c in stripes],
        )
        labelled = 0 < len(layer_names) <= MAX_LABELLED_LAYERS
        while len(self._labels) < (len(cells) if labelled else 0):
            item = pg.TextItem("", color="w", anchor=(0.5, 0.5))
            item.setFont(style.chart_font(10, bold=True))
            self.getPlotItem().addItem(item)
            self._labels.append(item)
        # The cell behind each label (None: unused), so a fit never shows a stale text.
        self._label_cells = [
            cells[i] if labelled and i < len(cells) else None for i in range(len(self._labels))
        ]
        bottom, top = _above_stripe_span()
        for item, c in zip(self._labels, self._label_cells, strict=True):
            if c is None:
                item.setText("")
                item.setVisible(False)
                continue
            item.setText(c.label)
            # A mixed cell's text is centred on the part above its stripe.
            lift = (bottom + top) / 2 if c.mixed else 0.0
            item.setPos(index[c.layer], MODE_ROW[c.mode] + lift)
            item.setVisible(True)
        self._update_label_visibility()
        self._update_legend(cells)
        plot = self.getPlotItem()
        plot.getAxis("bottom").setTicks([layer_ticks(layer_names)])
        rows = [(1, "plain"), (0, f"autocast ({autocast_dtype})" if autocast_dtype else "autocast")]
        plot.getAxis("left").setTicks([rows])
        n = max(len(layer_names), 1)
        plot.setXRange(-0.5, n - 0.5, padding=0.01)
        plot.setYRange(*Y_RANGE, padding=0)

    def _update_label_visibility(self) -> None:
        """Cell labels only while each cell is wide enough on screen to hold its text; a mixed
        cell's lines only as many as the part above its stripe holds (large text, a short
        chart: the second line "bf16 inside" goes first), else they would be drawn over the
        stripe (its tooltip still says all)."""
        plot = self.getPlotItem()
        if plot is None:  # being torn down
            return
        view = plot.getViewBox()
        shown = [(item, c) for item, c in zip(self._labels, self._label_cells, strict=True) if c]
        # A slot as wide as the widest label's first line (it grows with the text scale).
        widest = max(
            (
                QFontMetrics(item.textItem.font()).horizontalAdvance(c.label.split("\n")[0]) + 12
                for item, c in shown
            ),
            default=0,
        )
        slot = view.width() / self._layer_count if self._layer_count > 0 else 0.0
        roomy = slot >= max(LABEL_MIN_SLOT_PX, widest)
        bottom, top = _above_stripe_span()
        above_stripe = (top - bottom) * view.height() / (Y_RANGE[1] - Y_RANGE[0])
        for item, c in shown:
            text = c.label
            if c.mixed:
                # As many lines as the part above the stripe holds (none: colors and tooltip).
                line_height = max(QFontMetrics(item.textItem.font()).lineSpacing(), 1)
                margins = 2 * item.textItem.document().documentMargin()
                fits = max(0, int((above_stripe - margins) // line_height))
                text = "\n".join(text.split("\n")[:fits])
            if item.toPlainText() != text:
                item.setText(text)
            item.setVisible(roomy and bool(text))

    def fit_text(self) -> None:
        super().fit_text()
        if hasattr(self, "_label_cells"):  # the plot area resizes before __init__ built them
            self._update_label_visibility()

    def _update_legend(self, cells: list[Cell]) -> None:
        self._legend.clear()
        present = sorted(
            {c.out_dtype for c in cells} | {c.compute_dtype for c in cells if c.mixed},
            key=_dtype_order,
        )
        for name in present:
            sample = self._legend_samples.get(name)
            if sample is None:
                color = style.dtype_color(name)
                sample = pg.BarGraphItem(
                    x=[0], height=[0], width=0, brush=pg.mkBrush(color), pen=pg.mkPen(None)
                )
                self._legend_samples[name] = sample
            self._legend.addItem(sample, name)

    # ---- tooltip -------------------------------------------------------------------------
    def cell_at(self, x: float, y: float) -> Cell | None:
        """The cell under data coordinates (x, y), if any."""
        col = round(x)
        row = round(y)
        if not 0 <= col < self._layer_count or row not in (0, 1):
            return None
        if abs(x - col) > CELL_WIDTH / 2 or abs(y - row) > CELL_HEIGHT / 2:
            return None
        mode = "plain" if row == 1 else "autocast"
        for cell in self._cells:
            if cell.mode == mode and self._index[cell.layer] == col:
                return cell
        return None

    def tooltip_at(self, x: float, y: float) -> str | None:
        cell = self.cell_at(x, y)
        return cell.tooltip if cell else None

    # ---- read-back for tests -------------------------------------------------------------
    def cells(self) -> list[Cell]:
        """The cells as drawn, in drawing order (layer by layer, plain then autocast)."""
        return list(self._cells)

    def drawn_colors(self) -> list[str]:
        """The brush color of every cell, read from the plot item itself."""
        brushes = self._cells_item.opts.get("brushes") or []
        return [pg.mkBrush(b).color().name() for b in brushes]

    def drawn_stripes(self) -> list[tuple[float, float, str]]:
        """(x, y, color) of every mixed cell's stripe, read from the plot item itself."""
        opts = self._stripes_item.opts
        brushes = opts.get("brushes") or []
        return [
            (x + (CELL_WIDTH / 2 - 0.04), y, pg.mkBrush(b).color().name())
            for x, y, b in zip(opts.get("x0") or [], opts.get("y0") or [], brushes, strict=True)
        ]

    def cell_labels(self) -> list[str]:
        """The in → out texts visible on the cells (none when the cells are too narrow)."""
        return [item.toPlainText() for item in self._labels if item.isVisible()]

    def legend_entries(self) -> list[str]:
        return [label.text for _sample, label in self._legend.items]


def _above_stripe_span() -> tuple[float, float]:
    """(bottom, top) of a mixed cell's part above its stripe, in data units from its row: its
    text is centred there and holds as many lines as fit."""
    stripe_top = -CELL_HEIGHT / 2 + STRIPE_INSET + CELL_HEIGHT * STRIPE_HEIGHT
    return stripe_top, CELL_HEIGHT / 2


def _dtype_order(name: str) -> tuple[int, str]:
    order = list(style.DTYPE_COLORS)
    return (order.index(name) if name in order else len(order), name)

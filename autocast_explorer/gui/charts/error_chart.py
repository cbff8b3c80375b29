"""Error per layer: the SQNR of each layer's autocast output against its float32 output, as bars.

The numbers are core's (`result.layers[i].error`, core/numerics.py); this module draws them.
Hovering a bar gives every metric of that layer (max |error|, mean relative error, cosine);
the Layers tab lists them as columns. `drawn()` reads back what the plot items hold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from autocast_explorer.gui.charts import formats
from autocast_explorer.gui.charts.layer_ticks import layer_ticks
from autocast_explorer.gui.charts.static_chart import StaticChart
from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.numerics.layer_error import LayerError

BAR_WIDTH = 0.7
#: Value labels above the bars are drawn only while they fit.
MAX_LABELLED_BARS = 16
#: Headroom above the tallest bar for its value label.
HEADROOM = 1.18
#: Where an identical layer's bar (SQNR +∞) is drawn, relative to the tallest finite bar.
INFINITE_BAR = 1.08
IDLE_HINT = "Press Run (F5) to measure each layer's error"
#: The other metrics are written at the foot of each bar when a bar slot is this wide (px).
METRICS_MIN_SLOT_PX = 140

EXPLANATION = (
    "<b>SQNR</b> (signal-to-quantisation-noise ratio) = 10·log10(mean(ref²) / mean((ref − low)²)), "
    "where ref is a layer's float32 output and low its autocast output on the same input. "
    "<b>Higher is better</b>: every 6 dB is about one more bit that matches float32; "
    "∞ means identical. At each bar's foot (and on hover): max |error|, mean relative error "
    "(mean|ref − low| ÷ mean|ref|) and cosine similarity; the Layers tab lists all four. "
    "<i>Input scale</i> and <i>input distribution</i> (Advanced, on the left) change these "
    "numbers: set them and Run again."
)


@dataclass(frozen=True)
class ErrorBar:
    """One drawn bar: the layer, its measured error and what was drawn for it."""

    layer: str
    kind: str
    out_dtype: str
    error: LayerError | None
    height: float
    label: str
    color: str

    @property
    def tooltip(self) -> str:
        return formats.error_tooltip(self.layer, self.kind, self.out_dtype, self.error)


def _metrics_text(error: LayerError | None) -> str:
    if error is None:
        return ""
    return (
        f"max |err| {formats.g3(error.max_abs)}\nmean rel {formats.g3(error.mean_rel)}\n"
        f"cos {formats.cosine(error.cosine)}"
    )


def _label(error: LayerError | None) -> str:
    if error is None:
        return "n/a"
    if error.identical:
        return "∞"
    if error.nonfinite:
        return "overflow"
    if not math.isfinite(error.sqnr_db):
        return formats.sqnr(error).split(" ")[0]
    return f"{error.sqnr_db:.1f} dB"


class ErrorChart(StaticChart):
    """A result view: `show_result(result)` and `clear()`; objectName `errorPlot`."""

    def __init__(self, parent: Any = None) -> None:
        base_tooltip = (
            "SQNR of each layer's autocast output against its float32 output (higher is "
            "closer to float32). Hover a bar for every error metric of that layer."
        )
        super().__init__(
            parent,
            name="errorPlot",
            tooltip=base_tooltip,
            minimum=(360, 240),
            left="SQNR (dB), higher = closer to float32",
            bottom="layer · bar color: the layer's autocast output dtype",
            grid=(False, True),
            grid_behind=True,
            hover=True,
        )
        plot = self.getPlotItem()
        self._bars_item = pg.BarGraphItem(
            x=[], height=[], width=BAR_WIDTH, brushes=[], pen=pg.mkPen(style.TEXT, width=1)
        )
        plot.addItem(self._bars_item)
        self._labels: list[pg.TextItem] = []
        self._metrics: list[pg.TextItem] = []
        self._hint = pg.TextItem(IDLE_HINT, color=style.MUTED, anchor=(0.5, 0.5))
        self._hint.setFont(style.chart_font())
        plot.addItem(self._hint)
        self._bars: list[ErrorBar] = []
        self.clear()

    # ---- result view ---------------------------------------------------------------------
    def show_result(self, result: ExperimentResult) -> None:
        layers = result.layers
        finite = [
            layer.error.sqnr_db
            for layer in layers
            if layer.error is not None and math.isfinite(layer.error.sqnr_db)
        ]
        top = max([*finite, 10.0])
        bottom = min([*finite, 0.0])
        bars = []
        for layer in layers:
            e = layer.error
            if e is None or math.isnan(e.sqnr_db):
                height = 0.0
            elif e.identical or e.sqnr_db == math.inf:
                height = top * INFINITE_BAR
            elif e.sqnr_db == -math.inf:
                height = 0.0
            else:
                height = e.sqnr_db
            out = layer.autocast.out_dtype if layer.autocast is not None else ""
            bars.append(
                ErrorBar(
                    layer=layer.name,
                    kind=layer.kind,
                    out_dtype=out,
                    error=e,
                    height=height,
                    label=_label(e),
                    color=style.dtype_color(out),
                )
            )
        measured = [(b.error.sqnr_db, b.layer) for b in bars if b.error is not None]
        finite_pairs = [(v, name) for v, name in measured if math.isfinite(v)]
        cfg = result.config
        context = f"input {cfg.input_distribution} × {cfg.input_scale:g} · autocast {cfg.dtype}"
        overflowed = sum(b.error.nonfinite for b in bars if b.error is not None)
        if overflowed:
            context = (
                f"<span style='color:{style.BAD}'><b>{overflowed:,} values overflowed to inf/NaN"
                f"</b></span> · {context}"
            )
        if not measured:
            subtitle = f"not measured in this result · {context}"
        elif finite_pairs:
            worst, name = min(finite_pairs)
            subtitle = f"lowest: <b>{name} {worst:.1f} dB</b> · {context}"
        else:
            subtitle = f"no finite SQNR · {context}"
        ymax = (top * INFINITE_BAR if any(b.label == "∞" for b in bars) else top) * HEADROOM
        ymin = bottom * HEADROOM if bottom < 0 else 0.0
        self._draw(bars, subtitle, ymin, ymax)
        self.set_hint("" if measured else "This result has no per-layer error")
        self._hint.setPos((len(bars) - 1) / 2, (ymin + ymax) / 2)

    def clear(self) -> None:
        self._draw([], "autocast output vs float32 output", 0.0, 1.0)
        self.set_hint(IDLE_HINT)
        self._hint.setPos(0.0, 0.5)
        self.getPlotItem().setXRange(-1, 1, padding=0)

    def _draw(self, bars: list[ErrorBar], subtitle: str, ymin: float, ymax: float) -> None:
        self._bars = bars
        n = len(bars)
        self._bars_item.setOpts(
            x=list(range(n)),
            height=[b.height for b in bars],
            brushes=[pg.mkBrush(b.color) for b in bars],
        )
        labelled = n <= MAX_LABELLED_BARS
        plot = self.getPlotItem()
        while len(self._labels) < (n if labelled else 0):
            item = pg.TextItem("", color=style.TEXT, anchor=(0.5, 1.0))
            item.setFont(style.chart_font(10, bold=True))
            plot.addItem(item)
            self._labels.append(item)
        for i, item in enumerate(self._labels):
            if labelled and i < n:
                item.setText(bars[i].label)
                item.setPos(i, max(bars[i].height, 0.0) + (ymax - ymin) * 0.01)
                item.setVisible(True)
            else:
                item.setVisible(False)
        while len(self._metrics) < n:
            item = pg.TextItem(
                "", color=style.TEXT, anchor=(0.5, 1.0), fill=pg.mkBrush(255, 255, 255, 215)
            )
            item.setFont(style.chart_font(9))
            plot.addItem(item)
            self._metrics.append(item)
        for i, item in enumerate(self._metrics):
            item.setText(_metrics_text(bars[i].error) if i < n else "")
            item.setPos(i, ymin + (ymax - ymin) * 0.02)
        self._update_metrics_visibility()
        plot.getAxis("bottom").setTicks([layer_ticks([b.layer for b in bars], MAX_LABELLED_BARS)])
        if n:
            plot.setXRange(-0.6, n - 0.4, padding=0)
        plot.setYRange(ymin, ymax, padding=0)
        style.set_title(plot, "Error per layer: SQNR of autocast vs float32", subtitle)

    def _update_metrics_visibility(self) -> None:
        """Metrics at the bars' feet only while each bar's slot is wide enough to hold them."""
        n = len(self._bars)
        width = self.getPlotItem().getViewBox().width()
        # As wide as the widest metrics text (it grows with the text scale), at least the floor.
        widest = max(
            (m.textItem.boundingRect().width() + 8 for m in self._metrics if m.toPlainText()),
            default=0.0,
        )
        roomy = n > 0 and width / n >= max(METRICS_MIN_SLOT_PX, widest)
        for i, item in enumerate(self._metrics):
            item.setVisible(roomy and i < n and bool(item.toPlainText()))

    def fit_text(self) -> None:
        super().fit_text()
        if hasattr(self, "_metrics"):  # the plot area resizes before __init__ built them
            self._update_metrics_visibility()

    # ---- tooltip -------------------------------------------------------------------------
    def bar_at(self, x: float, y: float | None = None) -> ErrorBar | None:
        """The bar under data coordinates (x, y) (y None: anywhere in the column)."""
        i = round(x)
        if not 0 <= i < len(self._bars) or abs(x - i) > BAR_WIDTH / 2:
            return None
        bar = self._bars[i]
        if y is not None and not (min(0.0, bar.height) <= y <= max(0.0, bar.height)):
            return None
        return bar

    def tooltip_at(self, x: float, y: float) -> str | None:
        bar = self.bar_at(x)
        return bar.tooltip if bar else None

    # ---- read-back for tests -------------------------------------------------------------
    def bars(self) -> list[ErrorBar]:
        return list(self._bars)

    def drawn(self) -> dict[str, Any]:
        """What the plot items hold: bar heights and colors, value labels, ticks, title."""
        opts = self._bars_item.opts
        heights = opts.get("height")
        levels = self.getPlotItem().getAxis("bottom")._tickLevels
        return {
            "heights": [] if heights is None else [float(h) for h in heights],
            "colors": [pg.mkBrush(b).color().name() for b in opts.get("brushes") or []],
            "labels": [item.toPlainText() for item in self._labels if item.isVisible()],
            "metrics": [item.toPlainText() for item in self._metrics[: len(self._bars)]],
            "metrics_shown": any(item.isVisible() for item in self._metrics),
            "ticks": [text for _pos, text in (levels[0] if levels else [])],
            "title": self.getPlotItem().titleLabel.text,
        }


class ErrorView(QWidget):
    """The "Layer error" tab: the chart and a paragraph saying what SQNR means."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("errorView")
        self.chart = ErrorChart()
        self.chart.setMinimumWidth(300)  # a tab between the controls and the Lessons panel
        self.explanation = QLabel(EXPLANATION)
        self.explanation.setObjectName("errorExplanation")
        self.explanation.setWordWrap(True)
        self.explanation.setTextFormat(Qt.TextFormat.RichText)
        self.explanation.setStyleSheet(f"color: {style.MUTED}; padding: 2px 6px;")
        self.explanation.setToolTip("What the error chart measures (core/numerics.py).")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.chart, 1)
        layout.addWidget(self.explanation)

    def show_result(self, result: ExperimentResult) -> None:
        self.chart.show_result(result)

    def clear(self) -> None:
        self.chart.clear()

"""Prediction agreement: agree/rows and the allclose verdict, and a histogram of |plain − autocast|.

The histogram's edges and counts are core's (`result.agreement.histogram`); this module only
draws them, with the atol line where it falls inside the drawn range.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyqtgraph as pg
from PySide6.QtCore import Qt

from autocast_explorer.gui.charts.static_chart import StaticChart
from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult

#: Room above the tallest bin for the statistics text.
HEADROOM = 1.55


def _g(value: float) -> str:
    return f"{value:.3g}"


class AgreementChart(StaticChart):
    """A result view: `show_result(result)` and `clear()`; objectName `agreementPlot`."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            parent,
            name="agreementPlot",
            tooltip=(
                "Do the two runs predict the same class (argmax) for each row, and are all logits "
                "within allclose(atol, rtol)? The histogram counts |plain − autocast| over every "
                "logit."
            ),
            minimum=(300, 220),
            left="logits in bin",
            bottom="|plain − autocast| per logit",
            grid=(False, True),
            grid_behind=True,
        )
        plot = self.getPlotItem()
        self._bars = pg.BarGraphItem(
            x0=[],
            x1=[],
            height=[],
            brush=pg.mkBrush(style.HISTOGRAM),
            pen=pg.mkPen(style.HISTOGRAM),
        )
        plot.addItem(self._bars)
        self._atol_line = pg.InfiniteLine(
            angle=90,
            movable=False,
            pen=pg.mkPen(style.BAD, width=2, style=Qt.PenStyle.DashLine),
            label="atol",
            labelOpts={"position": 0.9, "color": style.BAD, "anchors": [(1, 0), (1, 0)]},
        )
        plot.addItem(self._atol_line)
        self._stats = pg.TextItem("", color=style.TEXT, anchor=(1.0, 0.0))
        self._stats.setFont(style.chart_font(10))
        plot.addItem(self._stats)
        self._hint = pg.TextItem(
            "Press Run (F5) to compare predictions", color=style.MUTED, anchor=(0.5, 0.5)
        )
        self._hint.setFont(style.chart_font())
        self._hint.setPos(0.5, 0.5)
        plot.addItem(self._hint)
        self._title = ""
        self.clear()

    # ---- result view ---------------------------------------------------------------------
    def show_result(self, result: ExperimentResult) -> None:
        a = result.agreement
        if a is None:
            self.clear()
            self._set_title("autocast raised an error")
            self.set_hint("The autocast forward raised: no predictions to compare")
            return
        hist = a.histogram
        edges = list(hist.edges)
        counts = list(hist.counts)
        self._bars.setOpts(x0=edges[:-1], x1=edges[1:], height=counts)
        verdict_color = style.OK if a.allclose else style.BAD
        if a.no_argmax_reason:  # no predicted class (BERT's hidden states): no rows to agree
            agreed = f"<span style='color:{style.MUTED}'><b>no predicted class</b></span>"
        else:
            agree_color = style.OK if a.agree == a.rows else style.BAD
            agreed = (
                f"<span style='color:{agree_color}'><b>{a.agree}/{a.rows} rows agree</b></span>"
            )
        self._set_title(
            f"{agreed} · <span style='color:{verdict_color}'><b>allclose(atol {a.atol:g}): "
            f"{'yes' if a.allclose else 'no'}</b></span>"
        )
        xmax = edges[-1] if edges else 1.0
        ymax = max(max(counts, default=0), 1) * HEADROOM
        plot = self.getPlotItem()
        plot.setXRange(0, xmax, padding=0.02)
        plot.setYRange(0, ymax, padding=0)
        self._atol_line.setValue(a.atol)
        self._atol_line.setVisible(a.atol <= xmax)
        off_scale = "" if a.atol <= xmax else f"\natol {a.atol:g} → off the scale"
        self._stats.setText(
            f"max |diff| {_g(a.max_abs_diff)}\nmean |diff| {_g(a.mean_abs_diff)}\n"
            f"cosine {a.cosine:.6f}{off_scale}"
        )
        self._stats.setPos(xmax, ymax)
        self.set_hint("")

    def clear(self) -> None:
        self._bars.setOpts(x0=[], x1=[], height=[])
        self._atol_line.setVisible(False)
        self._stats.setText("")
        self._set_title("plain vs autocast logits")
        self.set_hint("Press Run (F5) to compare predictions")
        plot = self.getPlotItem()
        plot.setXRange(0, 1, padding=0)
        plot.setYRange(0, 1, padding=0)

    def _set_title(self, second_line: str) -> None:
        self._title = second_line
        style.set_title(self.getPlotItem(), "Prediction agreement", second_line)

    # ---- read-back for tests -------------------------------------------------------------
    def drawn(self) -> dict[str, Any]:
        """Histogram bins and counts as held by the bar item, plus the texts shown."""
        opts = self._bars.opts

        def floats(key: str) -> list[float]:
            value = opts.get(key)
            return [] if value is None else [float(v) for v in value]

        return {
            "x0": floats("x0"),
            "x1": floats("x1"),
            "counts": [round(v) for v in floats("height")],
            "title": self.getPlotItem().titleLabel.text,
            "stats_text": self._stats.toPlainText(),
            "atol_line": self._atol_line.value() if self._atol_line.isVisible() else None,
        }

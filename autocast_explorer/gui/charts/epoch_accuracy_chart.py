"""Held-out accuracy after each epoch of training on real data.

In inference mode the model is trained once, in float32, so one curve (core's DataInfo
history); in training mode both copies are scored after every epoch, drawn live as the
epochs complete. A run that trained with MSE (a model without classifier logits) has no
accuracy to score: the chart then draws both copies' training MSE per step and names the
held-out MSE, rather than stay blank. `drawn()` reads the curves back from the plot items for
tests.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pyqtgraph as pg
from PySide6.QtCore import Qt

from autocast_explorer.gui.charts.static_chart import StaticChart
from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult

TITLE = "Held-out accuracy per epoch"
MSE_TITLE = "No accuracy: training MSE per step"
#: The marks of float32's and autocast's epochs.
EPOCH_SYMBOLS = ("o", "t1")


class EpochAccuracyChart(StaticChart):
    """objectName `epochAccuracyPlot`: `add_epoch`, `show_result`, `clear`, `drawn`."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            parent,
            name="epochAccuracyPlot",
            tooltip=(
                "Accuracy on the held-out rows after each training epoch. Inference mode trains "
                "one float32 model (one curve); Training mode trains a float32 and an autocast "
                "copy side by side and scores both after every epoch."
            ),
            minimum=(300, 200),
            left="held-out accuracy (%)",
            bottom="epoch",
            grid=(True, True),
            grid_behind=True,
        )
        plot = self.getPlotItem()
        self._legend = plot.addLegend(offset=(-10, -10), labelTextSize="10pt")
        # Each epoch is a mark as well as a point of the curve: one epoch draws no line.
        self._plain = plot.plot(
            [],
            [],
            pen=pg.mkPen(style.dtype_color("float32"), width=3),
            symbol=EPOCH_SYMBOLS[0],
            symbolSize=9,
            symbolBrush=style.dtype_color("float32"),
            name="float32",
        )
        self._auto = plot.plot(
            [],
            [],
            pen=pg.mkPen(style.dtype_color("bfloat16"), width=2, style=Qt.PenStyle.DashLine),
            symbol=EPOCH_SYMBOLS[1],
            symbolSize=9,
            symbolBrush=style.dtype_color("bfloat16"),
            name="autocast",
        )
        self._points: dict[str, list[tuple[int, float]]] = {"plain": [], "autocast": []}
        self._mse_line = ""  # set while the chart shows an MSE run's losses
        self.clear()

    def add_epoch(self, epoch: int, plain: float, autocast: float | None, dtype: str) -> None:
        """One more epoch's scores (autocast None: only a float32 model is trained)."""
        self._points["plain"].append((epoch, plain * 100))
        if autocast is not None:
            self._points["autocast"].append((epoch, autocast * 100))
        self._redraw(dtype)

    def show_result(self, result: ExperimentResult) -> None:
        self.clear()
        train = result.train
        if train is not None and not train.has_accuracy:
            self._show_mse(result)
            return
        if result.train is not None and result.train.epochs:
            for e in result.train.epochs:
                self._points["plain"].append((e.epoch, e.accuracy["plain"] * 100))
                self._points["autocast"].append((e.epoch, e.accuracy["autocast"] * 100))
        elif result.data is not None:
            self._points["plain"] = [(h.epoch, h.accuracy * 100) for h in result.data.history]
        self._redraw(result.config.dtype)

    def clear(self) -> None:
        self._points = {"plain": [], "autocast": []}
        self._mse_line = ""
        plot = self.getPlotItem()
        plot.setLabel("left", "held-out accuracy (%)")
        plot.setLabel("bottom", "epoch")
        self._redraw("bfloat16")

    def _show_mse(self, result: ExperimentResult) -> None:
        """Both copies' training MSE per step (finite values), the held-out MSE in the title."""
        train = result.train
        assert train is not None
        for mode in ("plain", "autocast"):
            self._points[mode] = [
                (step, value)
                for step, value in enumerate(train.loss[mode], start=1)
                if math.isfinite(value)
            ]
        held = train.held_out_loss
        self._mse_line = (
            f"held-out MSE: float32 {held['plain']:.4g} · {result.config.dtype} "
            f"{held['autocast']:.4g}"
            if held
            else "the output is not classifier logits"
        )
        plot = self.getPlotItem()
        plot.setLabel("left", "training MSE")
        plot.setLabel("bottom", "training step")
        self._redraw(result.config.dtype)

    def shows_mse(self) -> bool:
        """Whether the chart holds an MSE run's losses (no accuracy to draw)."""
        return bool(self._mse_line)

    def drawn(self) -> dict[str, list[tuple[float, float]]]:
        """The curves as drawn: mode → [(epoch, accuracy %)] (an MSE run: [(step, MSE)])."""
        out = {}
        for mode, item in (("plain", self._plain), ("autocast", self._auto)):
            xs, ys = item.getData()
            out[mode] = [] if xs is None else list(zip(xs.tolist(), ys.tolist(), strict=True))
        return out

    def _redraw(self, dtype: str) -> None:
        for (mode, item), symbol in zip(
            (("plain", self._plain), ("autocast", self._auto)), EPOCH_SYMBOLS, strict=True
        ):
            points = self._points[mode]
            item.setSymbol(None if self._mse_line else symbol)  # no mark per training step
            item.setData([p[0] for p in points], [p[1] for p in points])
        self._auto.setPen(pg.mkPen(style.dtype_color(dtype), width=2, style=Qt.PenStyle.DashLine))
        self._auto.setSymbolBrush(style.dtype_color(dtype))
        for sample, label in self._legend.items:
            if sample.item is self._auto:
                label.setText(f"autocast ({dtype})")
        self._legend.setVisible(bool(self._points["autocast"]))
        values = [p[1] for ps in self._points.values() for p in ps]
        epochs = [p[0] for ps in self._points.values() for p in ps]
        plot = self.getPlotItem()
        plot.setXRange(1, max(max(epochs, default=1), 2), padding=0.02)
        if self._mse_line:  # losses fall to the lower right: the legend goes top right
            self._legend.anchor((1, 0), (1, 0), offset=(-10, 10))
            plot.setYRange(0, max(values, default=1.0) * 1.08 or 1.0, padding=0)
            style.set_title(plot, MSE_TITLE, self._mse_line)
            return
        self._legend.anchor((1, 1), (1, 1), offset=(-10, -10))  # accuracy rises to the top
        plot.setYRange(min(values, default=0.0), 100, padding=0.05)
        last = self._points["plain"][-1][1] if self._points["plain"] else None
        second = (
            "no real data: choose Data: Handwritten digits"
            if last is None
            else (f"float32 {last:.1f}% after epoch {self._points['plain'][-1][0]}")
        )
        style.set_title(plot, TITLE, second)

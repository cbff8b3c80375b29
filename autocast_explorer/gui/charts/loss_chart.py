"""Training loss per step: the float32 copy and the autocast copy, drawn live as steps complete.

Each curve is one PlotDataItem created once and updated with setData as steps stream in (the
pyqtgraph pattern); the finished run's held-out accuracies (an MSE run: its held-out MSE)
go in the title, and the left axis names the loss. Steps land in
preallocated arrays with a running maximum, and the curves are redrawn at most every
REDRAW_INTERVAL_S (and at the last step), so a long run costs the window a bounded number of
redraws instead of one full redraw per step. `drawn()` reads the
curves back from the plot items so tests check what is on screen.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt

from autocast_explorer.gui.charts.static_chart import StaticChart
from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.experiment.training import StepProgress

HINT = "Choose Training mode and press Run (F5)"
#: Axis captions by the result's `train.loss_kind`.
LOSS_CAPTIONS = {"cross_entropy": "loss (cross-entropy)", "mse": "loss (MSE to the target)"}


def loss_caption(kind: str) -> str:
    return LOSS_CAPTIONS.get(kind, f"loss ({kind})")


#: Streamed steps are drawn at most this often (the last step is always drawn at once).
REDRAW_INTERVAL_S = 0.05


class LossChart(StaticChart):
    """`start(steps, dtype)`, `add_step(progress)`, `show_result(result)`, `clear()`; `lossPlot`."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            parent,
            name="lossPlot",
            tooltip=(
                "Training loss after each step, for two copies of the same model trained on the "
                "same batches: one in float32, one under autocast. The curves are drawn as the "
                "steps complete."
            ),
            minimum=(360, 240),
            left=loss_caption("cross_entropy"),
            bottom="training step",
            grid=(True, True),
            grid_behind=True,
        )
        plot = self.getPlotItem()
        self._legend = plot.addLegend(offset=(-10, 10), labelTextSize="10pt")
        self._plain = plot.plot(
            [], [], pen=pg.mkPen(style.dtype_color("float32"), width=3), name="float32"
        )
        self._auto = plot.plot(
            [],
            [],
            pen=pg.mkPen(style.dtype_color("bfloat16"), width=2, style=Qt.PenStyle.DashLine),
            name="autocast",
        )
        self._hint = pg.TextItem(HINT, color=style.MUTED, anchor=(0.5, 0.5))
        self._hint.setFont(style.chart_font())
        plot.addItem(self._hint)
        # rows: step, float32 loss, autocast loss; the first `_count` columns are filled
        self._curves = np.empty((3, 0))
        self._count = 0
        self._top = 0.0  # the largest finite loss so far (the y range)
        self._drawn_count = 0
        self._last_redraw = 0.0
        self._total = 0
        self._dtype = "bfloat16"
        self._accuracy_text = ""
        self._kind = "cross_entropy"
        self.clear()

    # ---- live -----------------------------------------------------------------------------
    def start(self, steps: int, dtype: str) -> None:
        """Empty curves for a run of `steps` steps under autocast `dtype`."""
        self._reset(steps, dtype)
        self._set_title(f"training… 0/{steps} steps")

    def add_step(self, progress: StepProgress) -> None:
        """Append one step's two losses (plain data streamed from the worker)."""
        if progress.steps != self._total:
            self._reset(progress.steps, self._dtype)
        self._set_kind(progress.loss_kind)
        self._append(progress.step, progress.loss_plain, progress.loss_autocast)
        last = progress.step >= progress.steps
        if last or time.monotonic() - self._last_redraw >= REDRAW_INTERVAL_S:
            self._redraw()
        self._set_title(
            f"training… {progress.step}/{progress.steps} steps · loss "
            f"{progress.loss_plain:.3f} (float32) / {progress.loss_autocast:.3f} ({self._dtype})"
        )

    # ---- result view ------------------------------------------------------------------------
    def show_result(self, result: ExperimentResult) -> None:
        train = result.train
        if train is None:
            self.clear()
            return
        self._reset(train.steps, result.config.dtype)
        self._set_kind(train.loss_kind)
        for step, (plain, auto) in enumerate(
            zip(train.loss["plain"], train.loss["autocast"], strict=False), start=1
        ):
            self._append(step, plain, auto)
        self._redraw()
        acc, held = train.accuracy, train.held_out_loss
        if train.has_accuracy:
            self._accuracy_text = (
                f"held-out accuracy: float32 {acc['plain']:.1%} · {self._dtype} "
                f"{acc['autocast']:.1%}"
            )
        elif held:
            self._accuracy_text = (
                f"no accuracy (not logits) · held-out MSE: float32 {held['plain']:.4g} · "
                f"{self._dtype} {held['autocast']:.4g}"
            )
        else:
            self._accuracy_text = "no accuracy: the output is not classifier logits"
        self._set_title(self._accuracy_text)

    def clear(self) -> None:
        self._reset(0, self._dtype)
        self._set_kind("cross_entropy")
        self._set_title("float32 vs autocast")
        self.set_hint(HINT)
        self._hint.setPos(0.5, 0.5)
        self.getPlotItem().setRange(xRange=(0, 1), yRange=(0, 1), padding=0)

    def has_data(self) -> bool:
        return self._count > 0

    def flush(self) -> None:
        """Draw the steps that arrived since the last redraw (a run that stopped early)."""
        if self._drawn_count != self._count:
            self._redraw()

    def _reset(self, steps: int, dtype: str) -> None:
        self._total = steps
        self._dtype = dtype
        self._curves = np.empty((3, max(steps, 16)))
        self._count = self._drawn_count = 0
        self._top = 0.0
        self._accuracy_text = ""
        self._auto.setPen(pg.mkPen(style.dtype_color(dtype), width=2, style=Qt.PenStyle.DashLine))
        self._rename(self._auto, f"autocast ({dtype})")
        self._plain.setData([], [])
        self._auto.setData([], [])
        self.set_hint("")
        # A legend of curves not drawn yet would sit on the hint in a narrow chart.
        self._legend.setVisible(steps > 0)
        if steps:
            self.getPlotItem().setXRange(1, max(steps, 2), padding=0.02)

    def _set_kind(self, kind: str) -> None:
        """The left axis names the loss trained on."""
        if kind != self._kind:
            self._kind = kind
            self.getPlotItem().setLabel("left", loss_caption(kind))

    def _rename(self, item: pg.PlotDataItem, name: str) -> None:
        for sample, label in self._legend.items:
            if sample.item is item:
                label.setText(name)

    def _append(self, step: int, plain: float | None, auto: float | None) -> None:
        """One step into the arrays (doubled when full); a missing loss is NaN (not drawn)."""
        if self._count == self._curves.shape[1]:
            grown = np.empty((3, max(16, 2 * self._count)))
            grown[:, : self._count] = self._curves[:, : self._count]
            self._curves = grown
        values = [math.nan if v is None else float(v) for v in (plain, auto)]
        self._curves[:, self._count] = (step, *values)
        self._count += 1
        finite = [v for v in values if math.isfinite(v)]
        self._top = max([self._top, *finite])

    def _redraw(self) -> None:
        steps, plain, auto = self._curves[:, : self._count]
        self._plain.setData(steps, plain, connect="finite")
        self._auto.setData(steps, auto, connect="finite")
        self._drawn_count = self._count
        self._last_redraw = time.monotonic()
        top = self._top * 1.08 or 1.0
        self.getPlotItem().setYRange(0, top, padding=0)

    def _set_title(self, second_line: str) -> None:
        style.set_title(self.getPlotItem(), "Training loss per step", second_line)

    # ---- read-back for tests ----------------------------------------------------------------
    def drawn(self) -> dict[str, Any]:
        """The curves as the plot items hold them, the legend and the title."""
        self.flush()

        def data(item: pg.PlotDataItem) -> tuple[list[float], list[float]]:
            xs, ys = item.getData()
            if xs is None:
                return [], []
            return [float(v) for v in xs], [float(v) for v in ys]

        return {
            "plain": data(self._plain),
            "autocast": data(self._auto),
            "legend": [label.text for _sample, label in self._legend.items],
            "autocast_color": self._auto.opts["pen"].color().name(),
            "accuracy_text": self._accuracy_text,
            "left": self.getPlotItem().getAxis("left").labelText,
            "title": self.getPlotItem().titleLabel.text,
        }

"""Memory saved for backward: bytes of the tensors autograd kept, float32 vs autocast.

Two bars, from `train.saved_bytes` (counted in core with saved_tensors_hooks), labelled in MB
with the number of tensors; the title gives the ratio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyqtgraph as pg

from autocast_explorer.gui.charts.static_chart import StaticChart
from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult


def _mb(count: float) -> str:
    return f"{count / 1e6:.2f} MB" if count >= 1e5 else f"{count / 1e3:.1f} kB"


class SavedBytesChart(StaticChart):
    """A result view: `show_result(result)` and `clear()`; objectName `savedBytesPlot`."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            parent,
            name="savedBytesPlot",
            tooltip=(
                "Bytes of the tensors autograd saved between forward and backward in one "
                "training step, counted with torch.autograd.graph.saved_tensors_hooks. Under "
                "autocast the saved activations and weight copies are low-precision."
            ),
            minimum=(260, 220),
            left="MB saved for backward",
            grid=(False, True),
            grid_behind=True,
        )
        plot = self.getPlotItem()
        plot.setXRange(-0.6, 1.6, padding=0)
        plot.getAxis("bottom").setHeight(48)  # two-line tick labels
        self._bars = pg.BarGraphItem(
            x=[], height=[], width=0.55, brushes=[], pen=pg.mkPen(style.TEXT, width=1)
        )
        plot.addItem(self._bars)
        self._labels = [pg.TextItem("", color=style.TEXT, anchor=(0.5, 1.0)) for _ in range(2)]
        for item in self._labels:
            item.setFont(style.chart_font(bold=True))
            plot.addItem(item)
        self._bytes: list[int] = []
        self.clear()

    def show_result(self, result: ExperimentResult) -> None:
        train = result.train
        if train is None:
            self.clear()
            return
        dtypes = ["float32", result.config.dtype]
        values = [train.saved_bytes.get("plain", 0), train.saved_bytes.get("autocast", 0)]
        counts = [train.saved_tensors.get("plain", 0), train.saved_tensors.get("autocast", 0)]
        self._bytes = values
        heights = [v / 1e6 for v in values]
        self._bars.setOpts(
            x=[0.0, 1.0],
            height=heights,
            brushes=[pg.mkBrush(style.dtype_color(d)) for d in dtypes],
        )
        top = max(heights) * 1.25 or 1.0
        for x, height, value, label in zip((0.0, 1.0), heights, values, self._labels, strict=True):
            label.setText(_mb(value))
            label.setPos(x, height + top * 0.01)
        self.getPlotItem().setYRange(0, top, padding=0)
        self.getPlotItem().getAxis("bottom").setTicks(
            [
                [
                    (0.0, f"float32\n{counts[0]} tensors"),
                    (1.0, f"{dtypes[1]}\n{counts[1]} tensors"),
                ]
            ]
        )
        ratio = train.saved_ratio
        self._set_title(f"autocast keeps {ratio:.0%} of float32's bytes" if ratio == ratio else "")

    def clear(self) -> None:
        self._bytes = []
        self._bars.setOpts(x=[], height=[], brushes=[])
        for item in self._labels:
            item.setText("")
        self.getPlotItem().getAxis("bottom").setTicks([[(0.0, "plain"), (1.0, "autocast")]])
        self.getPlotItem().setYRange(0, 1, padding=0)
        self._set_title("a training run measures it")

    def _set_title(self, second_line: str) -> None:
        style.set_title(self.getPlotItem(), "Memory saved for backward", second_line)

    def drawn(self) -> dict[str, Any]:
        heights = self._bars.opts.get("height")
        return {
            "heights_mb": [] if heights is None else [float(h) for h in heights],
            "bytes": list(self._bytes),
            "labels": [item.toPlainText() for item in self._labels],
            "title": self.getPlotItem().titleLabel.text,
        }

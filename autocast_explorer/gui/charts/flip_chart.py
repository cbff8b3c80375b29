"""Flip rate against float32 margin: do predictions flip where the float32 winner led narrowly?

Core sorts the rows by float32 margin (top-1 − top-2 logit) and cuts them into bins of equal
row count (`result.agreement.margin_bins`, core/flips.py); each bar is the share of one bin's
rows whose predicted class changed under autocast. Smallest margins on the left.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pyqtgraph as pg

from autocast_explorer.gui.charts.static_chart import StaticChart
from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.numerics.flips import MarginBin

BAR_WIDTH = 0.8
#: The y axis shows at least 0–10 % so a few flips do not look like a wall.
MIN_TOP_PERCENT = 10.0
HEADROOM = 1.25
NO_FLIP_COLOR = "#b8c4d6"
IDLE_HINT = "Press Run (F5) to see which predictions flip"


def _margin(value: float) -> str:
    return "∞" if math.isinf(value) else f"{value:.2g}"


def bin_tooltip(b: MarginBin) -> str:
    return (
        f"float32 margin {b.low:.4g} – {b.high:.4g}: {b.rows} rows, {b.flips} flipped "
        f"({100 * b.rate:.1f}%)"
    )


class FlipRateChart(StaticChart):
    """A result view: `show_result(result)` and `clear()`; objectName `flipRatePlot`."""

    def __init__(self, parent: Any = None) -> None:
        base_tooltip = (
            "Rows sorted by their float32 margin (top-1 minus top-2 logit) and cut into bins "
            "of equal row count, smallest margins on the left; each bar is the share of that "
            "bin's rows whose predicted class changed under autocast. Hover a bar for its range."
        )
        super().__init__(
            parent,
            name="flipRatePlot",
            tooltip=base_tooltip,
            minimum=(360, 240),
            left="rows that flipped (%)",
            bottom="float32 margin, top-1 − top-2 logit (tick: bin's largest)",
            grid=(False, True),
            grid_behind=True,
            tick_pt=10,
            hover=True,
        )
        plot = self.getPlotItem()
        self._bars_item = pg.BarGraphItem(
            x=[], height=[], width=BAR_WIDTH, brushes=[], pen=pg.mkPen(style.TEXT, width=1)
        )
        plot.addItem(self._bars_item)
        self._labels: list[pg.TextItem] = []
        self._hint = pg.TextItem(IDLE_HINT, color=style.MUTED, anchor=(0.5, 0.5))
        self._hint.setFont(style.chart_font())
        plot.addItem(self._hint)
        self._bins: list[MarginBin] = []
        self._title = ""
        self.clear()

    # ---- result view ---------------------------------------------------------------------
    def show_result(self, result: ExperimentResult) -> None:
        a = result.agreement
        if a is None:
            self.clear()
            self.set_hint("The autocast forward raised: no predictions to compare")
            return
        bins = list(a.margin_bins)
        flipped = a.rows - a.agree
        if not bins:
            subtitle = "not measured in this result"
        elif flipped == 0:
            subtitle = (
                f"<span style='color:{style.OK}'><b>no row flipped</b></span> (0 of {a.rows} rows)"
            )
        else:
            first = bins[0].flips
            subtitle = (
                f"<span style='color:{style.BAD}'><b>{flipped} of {a.rows} rows flipped</b></span>"
                f" · {first} in the smallest-margin bin (≤ {_margin(bins[0].high)})"
            )
        self._draw(bins, subtitle)
        self.set_hint("" if bins else "This result has no margin bins")

    def clear(self) -> None:
        self._draw([], "rows whose predicted class changed, by float32 margin")
        self.set_hint(IDLE_HINT)

    def _draw(self, bins: list[MarginBin], subtitle: str) -> None:
        self._bins = bins
        n = len(bins)
        heights = [100.0 * b.rate for b in bins]
        self._bars_item.setOpts(
            x=list(range(n)),
            height=heights,
            brushes=[pg.mkBrush(style.BAD if b.flips else NO_FLIP_COLOR) for b in bins],
        )
        ymax = max([*heights, MIN_TOP_PERCENT]) * HEADROOM
        plot = self.getPlotItem()
        while len(self._labels) < n:
            item = pg.TextItem("", color=style.TEXT, anchor=(0.5, 1.0))
            item.setFont(style.chart_font(9))
            plot.addItem(item)
            self._labels.append(item)
        for i, item in enumerate(self._labels):
            if i < n:
                item.setText(f"{bins[i].flips}/{bins[i].rows}")
                item.setPos(i, heights[i] + ymax * 0.01)
                item.setVisible(True)
            else:
                item.setVisible(False)
        plot.getAxis("bottom").setTicks([[(i, _margin(b.high)) for i, b in enumerate(bins)]])
        plot.setXRange(-0.6, max(n, 1) - 0.4, padding=0)
        plot.setYRange(0, ymax, padding=0)
        self._hint.setPos((max(n, 1) - 1) / 2, ymax / 2)
        self._title = subtitle
        style.set_title(plot, "Flip rate by float32 margin", subtitle)

    # ---- tooltip -------------------------------------------------------------------------
    def bin_at(self, x: float) -> MarginBin | None:
        i = round(x)
        if not 0 <= i < len(self._bins) or abs(x - i) > BAR_WIDTH / 2:
            return None
        return self._bins[i]

    def tooltip_at(self, x: float, y: float) -> str | None:
        b = self.bin_at(x)
        return bin_tooltip(b) if b else None

    # ---- read-back for tests -------------------------------------------------------------
    def drawn(self) -> dict[str, Any]:
        """Bar heights (% of rows flipped), colors, labels (flips/rows), ticks and title."""
        opts = self._bars_item.opts
        heights = opts.get("height")
        levels = self.getPlotItem().getAxis("bottom")._tickLevels
        return {
            "heights": [] if heights is None else [float(h) for h in heights],
            "colors": [pg.mkBrush(b).color().name() for b in opts.get("brushes") or []],
            "labels": [item.toPlainText() for item in self._labels if item.isVisible()],
            "ticks": [text for _pos, text in (levels[0] if levels else [])],
            "title": self.getPlotItem().titleLabel.text,
        }

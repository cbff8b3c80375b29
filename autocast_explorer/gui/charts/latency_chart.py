"""Latency per forward: plain vs autocast bars (median), p25–p75 error bars, the cold first call.

Every number drawn comes from the result's LatencyStats; `drawn()` reads the numbers back from
the plot items themselves so tests check what is on screen, not what was meant to be.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg

from autocast_explorer.gui.charts.static_chart import StaticChart
from autocast_explorer.gui.charts.untold import bar_brush, hatch_note, hatched
from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult

#: Headroom above the tallest whisker for the value labels (more where the plot is short).
HEADROOM = 1.2
#: The most of the plot's height the value labels' headroom may take (a very short plot).
MAX_LABEL_SHARE = 0.6
_EMPTY = np.zeros(0)


def _ms(value: float) -> str:
    if value >= 100:
        return f"{value:.0f} ms"
    if value >= 10:
        return f"{value:.1f} ms"
    if value >= 1:
        return f"{value:.2f} ms"
    return f"{value:.3f} ms"


class LatencyChart(StaticChart):
    """A result view: `show_result(result)` and `clear()`; objectName `latencyPlot`."""

    #: Minimum (width, height) at 100% text: two bars, two-line tick labels and a caption.
    MINIMUM = (300, 240)

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            parent,
            name="latencyPlot",
            tooltip=(
                "Time per forward pass. Bars: median; whiskers: 25th–75th percentile of the timed "
                "blocks; ▼ the very first (cold) call, which includes one-time set-up (▲ at the "
                "top: beyond the scale, value under the bar). The title's figure is the typical "
                "paired ratio (each float32 block ÷ the autocast block timed right after it), "
                "not the ratio of the two bars."
            ),
            minimum=self.MINIMUM,
            left="ms per forward",
            bottom="bar: median · whiskers: p25–p75 · ▼ cold call (▲ off scale)",
            grid=(False, True),
            grid_behind=True,
        )
        self._unit = "forward"  # what one timed call is: a training run times whole steps
        plot = self.getPlotItem()
        # Two-line tick labels (mode · dtype, cold call) plus the axis caption.
        plot.getAxis("bottom").setHeight(66)
        plot.setXRange(-0.55, 1.55, padding=0)
        plot.setYRange(0, 1, padding=0)

        self._bars = pg.BarGraphItem(
            x=[], height=[], width=0.55, brushes=[], pen=pg.mkPen(style.TEXT, width=1)
        )
        # ErrorBarItem does arithmetic on its inputs: it needs arrays, never lists.
        self._errors = pg.ErrorBarItem(
            x=_EMPTY,
            y=_EMPTY,
            top=_EMPTY,
            bottom=_EMPTY,
            beam=0.16,
            pen=pg.mkPen(style.ERROR_BAR, width=2),
        )
        self._cold = pg.ScatterPlotItem(
            size=15, pen=pg.mkPen("w", width=1), brush=pg.mkBrush(style.COLD_MARKER)
        )
        plot.addItem(self._bars)
        plot.addItem(self._errors)
        plot.addItem(self._cold)
        self._value_labels = [
            pg.TextItem("", color=style.TEXT, anchor=(0.5, 1.0)) for _ in range(2)
        ]
        for item in self._value_labels:
            item.setFont(style.chart_font(bold=True))
            plot.addItem(item)
        self._hint = pg.TextItem("Press Run (F5) to measure", color=style.MUTED, anchor=(0.5, 0.5))
        self._hint.setFont(style.chart_font())
        self._hint.setPos(0.5, 0.5)
        plot.addItem(self._hint)
        self._speedup_text = ""
        self._unreliable = ""
        self._plain_tooltip = self._base_tooltip
        # What `_fit_scale` places against the y range: (x, p75, median, cold) per bar.
        self._placed: list[tuple[float, float, float, float]] = []
        plot.getViewBox().sigResized.connect(self._fit_scale)
        self.clear()

    # ---- result view ---------------------------------------------------------------------
    def show_result(self, result: ExperimentResult) -> None:
        # When the autocast forward raised, only float32 was timed: one bar, and the
        # autocast slot says why it is empty.
        stats = [s for s in (result.plain, result.autocast) if s is not None]
        dtypes = ["float32", result.config.dtype][: len(stats)]
        x = [0.0, 1.0][: len(stats)]
        medians = [s.median_ms for s in stats]
        from autocast_explorer.core.experiment.speed_words import untold_words

        # A run that could not tell (too noisy, can't tell): the medians are drawn hatched, as
        # measurements, not a result; the tooltip says why.
        self._unreliable = untold_words(result.speed_call)
        self._bars.setOpts(
            x=x,
            height=medians,
            brushes=[bar_brush(style.dtype_color(d), bool(self._unreliable)) for d in dtypes],
        )
        note = hatch_note("this run", self._unreliable)
        self._base_tooltip = self._plain_tooltip + (f"\n{note}" if note else "")
        self.setToolTip(self._base_tooltip)
        self._errors.setData(
            x=np.asarray(x),
            y=np.asarray(medians),
            top=np.asarray([s.p75_ms - s.median_ms for s in stats]),
            bottom=np.asarray([s.median_ms - s.p25_ms for s in stats]),
        )
        colds = [s.cold_ms for s in stats]
        for label in self._value_labels:
            label.setText("")
        for s, label in zip(stats, self._value_labels, strict=False):
            label.setText(_ms(s.median_ms))
        self._placed = [
            (xi, s.p75_ms, s.median_ms, s.cold_ms) for xi, s in zip(x, stats, strict=True)
        ]
        from autocast_explorer.core.experiment.summary import speed_title

        self._speedup_text, tone = speed_title(result)
        color = {"ok": style.OK, "bad": style.BAD, "warn": style.WARN}.get(tone, style.MUTED)
        self._unit = "training step" if result.train is not None else "forward"
        self.getPlotItem().setLabel("left", f"ms per {self._unit}")
        self._set_title(f"<span style='color:{color}'><b>{self._speedup_text}</b></span>")
        self.set_hint("")
        axis = self.getPlotItem().getAxis("bottom")
        axis.setTicks(
            [
                [
                    (xi, f"{mode} · {d}\ncold {_ms(c)}")
                    for xi, mode, d, c in zip(x, ("plain", "autocast"), dtypes, colds, strict=False)
                ]
                + (
                    [(1.0, f"autocast · {result.config.dtype}\nraised an error")]
                    if result.autocast is None
                    else []
                )
            ]
        )
        if result.autocast is None:
            self.getPlotItem().setXRange(-0.6, 1.6, padding=0)
        self._fit_scale()

    def _fit_scale(self) -> None:
        """The y range with room above the tallest whisker for its value label, in pixels: at
        1024×640 with 150% text the plot is short, and a label standing out of it was drawn
        over the title. The value labels and the cold-call marks follow the range."""
        if not self._placed:
            return
        tallest = max(max(p75, median) for _x, p75, median, _cold in self._placed)
        plot_height = self.getPlotItem().getViewBox().height()
        label = max(item.textItem.boundingRect().height() for item in self._value_labels)
        share = min(label / plot_height, MAX_LABEL_SHARE) if plot_height > 0 else 0.0
        ymax = max(tallest * HEADROOM, tallest / (1 - 0.01 - share)) or 1.0
        for (xi, p75, _median, _cold), item in zip(self._placed, self._value_labels, strict=False):
            item.setPos(xi - 0.04, p75 + ymax * 0.01)
        # The cold call is often far slower than a warm one. Past the top it is pinned to the
        # edge as ▲ (the tick label under the bar gives its value), so the bars stay readable.
        top = ymax * 0.96
        colds = [cold for *_rest, cold in self._placed]
        self._cold.setData(
            x=[xi + 0.22 for xi, *_rest in self._placed],
            y=[min(c, top) for c in colds],
            data=colds,
            symbol=["t1" if c > top else "t" for c in colds],
        )
        self.getPlotItem().setYRange(0, ymax, padding=0)

    def clear(self) -> None:
        self._placed = []
        self._bars.setOpts(x=[], height=[], brushes=[])
        self._errors.setData(x=_EMPTY, y=_EMPTY, top=_EMPTY, bottom=_EMPTY)
        self._cold.setData(x=[], y=[])
        for item in self._value_labels:
            item.setText("")
        self._speedup_text = ""
        self._unreliable = ""
        self._base_tooltip = self._plain_tooltip
        self.setToolTip(self._base_tooltip)
        self._unit = "forward"
        self.getPlotItem().setLabel("left", "ms per forward")
        self._set_title("plain vs autocast")
        self.set_hint("Press Run (F5) to measure")
        self.getPlotItem().getAxis("bottom").setTicks([[(0.0, "plain"), (1.0, "autocast")]])
        self.getPlotItem().setYRange(0, 1, padding=0)

    def _set_title(self, second_line: str) -> None:
        # A training run times whole steps (forward, loss, backward, optimizer), not forwards.
        style.set_title(self.getPlotItem(), f"Latency per {self._unit}", second_line)

    # ---- read-back for tests -------------------------------------------------------------
    def drawn(self) -> dict[str, Any]:
        """What the plot items hold now: bar heights, whisker ends, cold values, texts."""
        opts = self._bars.opts
        heights = opts.get("height")
        eopts = self._errors.opts
        ys, tops, bottoms = (
            [] if eopts.get(k) is None else list(eopts[k]) for k in ("y", "top", "bottom")
        )
        brushes = opts.get("brushes") or []
        return {
            "heights": [] if heights is None else [float(h) for h in heights],
            "whisker_top": [float(y + t) for y, t in zip(ys, tops, strict=True)],
            "whisker_bottom": [float(y - b) for y, b in zip(ys, bottoms, strict=True)],
            "cold": [float(p.data()) for p in self._cold.points()],
            "colors": [pg.mkBrush(b).color().name() for b in brushes],
            "ticks": [text for _pos, text in self._ticks()],
            "value_labels": [item.toPlainText() for item in self._value_labels],
            "speedup_text": self._speedup_text,
            # Why the bars are hatched (could not tell: not a result); '' when solid.
            "unreliable": self._unreliable,
            "hatched": hatched(brushes),
            "title": self.getPlotItem().titleLabel.text,
            "y_range": tuple(self.getPlotItem().getViewBox().viewRange()[1]),
        }

    def _ticks(self) -> list[tuple[float, str]]:
        levels = self.getPlotItem().getAxis("bottom")._tickLevels
        return list(levels[0]) if levels else []

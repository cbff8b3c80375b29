"""Where autocast is entered: median latency of float32 and the three placements, side by side.

Bars are medians, whiskers p25–p75 (timed alternately by core.placements); under each bar the
casts that placement made per forward, counted by core (not assumed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyqtgraph as pg

from autocast_explorer.gui.charts.static_chart import StaticChart
from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.sweeps.placements import PlacementReport

HEADROOM = 1.25
_EMPTY = np.zeros(0)


def _shade(base: Any, name: str) -> str:
    """Per-call wears the autocast dtype's color; hoisted a lighter, pre-cast a darker shade."""
    if name == "hoisted":
        return base.lighter(135).name()
    if name == "pre_cast":
        return base.darker(140).name()
    return base.name()


def _ms(value: float) -> str:
    return f"{value:.3f} ms" if value < 10 else f"{value:.1f} ms"


class PlacementsChart(StaticChart):
    """objectName `placementsPlot`; `show_report(report)`, `clear()`, `drawn()`."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            parent,
            name="placementsPlot",
            tooltip=(
                "Median time per forward for float32 and for each way of entering autocast "
                "(whiskers: 25th–75th percentile), timed side by side. Under each bar: the casts "
                "observed in one steady-state forward."
            ),
            minimum=(340, 260),
            left="ms per forward",
            grid=(False, True),
            grid_behind=True,
        )
        plot = self.getPlotItem()
        plot.getAxis("bottom").setHeight(62)
        plot.setXRange(-0.6, 3.6, padding=0)
        self._bars = pg.BarGraphItem(
            x=[], height=[], width=0.6, brushes=[], pen=pg.mkPen(style.TEXT, width=1)
        )
        self._errors = pg.ErrorBarItem(
            x=_EMPTY,
            y=_EMPTY,
            top=_EMPTY,
            bottom=_EMPTY,
            beam=0.15,
            pen=pg.mkPen(style.ERROR_BAR, width=2),
        )
        plot.addItem(self._bars)
        plot.addItem(self._errors)
        self._labels = [pg.TextItem("", color=style.TEXT, anchor=(0.5, 1.0)) for _ in range(4)]
        for item in self._labels:
            item.setFont(style.chart_font(10, bold=True))
            plot.addItem(item)
        self._hint = pg.TextItem("Press Time placements (F7)", color=style.MUTED, anchor=(0.5, 0.5))
        self._hint.setFont(style.chart_font())
        self._hint.setPos(1.5, 0.5)
        plot.addItem(self._hint)
        self.clear()

    def show_report(self, report: PlacementReport) -> None:
        from autocast_explorer.core.sweeps.placements import casts_text

        stats = [report.float32, *(m.latency for m in report.modes)]
        base = pg.mkColor(style.dtype_color(report.dtype))
        colors = [style.dtype_color("float32")] + [_shade(base, m.name) for m in report.modes]
        x = [0.0, 1.0, 2.0, 3.0]
        medians = [s.median_ms for s in stats]
        top = max(max(s.p75_ms for s in stats), max(medians)) * HEADROOM or 1.0
        self._bars.setOpts(x=x, height=medians, brushes=[pg.mkBrush(c) for c in colors])
        self._errors.setData(
            x=np.asarray(x),
            y=np.asarray(medians),
            top=np.asarray([s.p75_ms - s.median_ms for s in stats]),
            bottom=np.asarray([s.median_ms - s.p25_ms for s in stats]),
        )
        for xi, s, label in zip(x, stats, self._labels, strict=True):
            label.setText(_ms(s.median_ms))
            label.setPos(xi, s.p75_ms + top * 0.01)
        ticks = [(0.0, "float32\nno autocast")]
        for xi, mode in zip(x[1:], report.modes, strict=True):
            ticks.append((xi, f"{mode.label}\n{casts_text(mode.casts_per_forward)}/forward"))
        self.getPlotItem().getAxis("bottom").setTicks([ticks])
        self.getPlotItem().setYRange(0, top, padding=0)
        self.set_hint("")
        style.set_title(
            self.getPlotItem(),
            f"Where autocast is entered ({report.dtype})",
            "bar: median · whiskers: p25–p75 · timed side by side",
        )

    def clear(self) -> None:
        self._bars.setOpts(x=[], height=[], brushes=[])
        self._errors.setData(x=_EMPTY, y=_EMPTY, top=_EMPTY, bottom=_EMPTY)
        for item in self._labels:
            item.setText("")
        self.getPlotItem().getAxis("bottom").setTicks(
            [[(0.0, "float32"), (1.0, "per-call"), (2.0, "hoisted"), (3.0, "pre-cast")]]
        )
        self.getPlotItem().setYRange(0, 1, padding=0)
        self.set_hint("Press Time placements (F7)")
        style.set_title(self.getPlotItem(), "Where autocast is entered", "not measured yet")

    # ---- read-back for tests ---------------------------------------------------------------
    def drawn(self) -> dict[str, Any]:
        heights = self._bars.opts.get("height")
        eopts = self._errors.opts
        ys, tops, bottoms = (
            [] if eopts.get(k) is None else list(eopts[k]) for k in ("y", "top", "bottom")
        )
        levels = self.getPlotItem().getAxis("bottom")._tickLevels
        return {
            "heights": [] if heights is None else [float(h) for h in heights],
            "whisker_top": [float(y + t) for y, t in zip(ys, tops, strict=True)],
            "whisker_bottom": [float(y - b) for y, b in zip(ys, bottoms, strict=True)],
            "ticks": [text for _pos, text in (levels[0] if levels else [])],
            "value_labels": [item.toPlainText() for item in self._labels],
            "colors": [pg.mkBrush(b).color().name() for b in self._bars.opts.get("brushes") or []],
        }

"""Colors and fonts shared by every chart and panel, chosen to read well on a projector.

A light theme (dark text on white) keeps contrast high on washed-out projectors; each dtype has
one color everywhere (latency bars, dtype grid, table), so a viewer learns it once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtGui import QColor, QFont, QFontDatabase, QFontMetrics, QPalette
from PySide6.QtWidgets import QApplication, QWidget

if TYPE_CHECKING:
    import pyqtgraph as pg

#: One color per dtype name as it appears in results ("float32", "bfloat16", …).
DTYPE_COLORS: dict[str, str] = {
    "float32": "#3465a4",
    "bfloat16": "#e5822a",
    "float16": "#2e9b5e",
    "float64": "#7b4fa0",
}
UNKNOWN_DTYPE_COLOR = "#9a9a9a"
#: Short names for cells and ticks where the full name does not fit.
DTYPE_SHORT: dict[str, str] = {
    "float32": "fp32",
    "bfloat16": "bf16",
    "float16": "fp16",
    "float64": "fp64",
}

TEXT = "#202124"
MUTED = "#5f6368"
DISABLED_TEXT = "#a0a4a8"
GRID_ALPHA = 0.25
ERROR_BAR = "#202124"
COLD_MARKER = "#c0392b"
HISTOGRAM = "#5b7fb5"
OK = "#1e7d32"
BAD = "#b3261e"
WARN = "#8a5a00"
ERROR_BACKGROUND = "#fdecea"
CHART_FONT_PT = 11
TITLE_SIZE = "13pt"
SUBTITLE_SIZE = "12pt"


def dtype_color(name: str) -> str:
    return DTYPE_COLORS.get(name, UNKNOWN_DTYPE_COLOR)


def dtype_short(name: str) -> str:
    return DTYPE_SHORT.get(name, name)


def chart_font(points: int = CHART_FONT_PT, bold: bool = False) -> QFont:
    font = QFont()
    font.setPointSize(points)
    font.setBold(bold)
    return font


#: Dynamic property: a widget's own font size (pt) before presentation mode scaled it.
BASE_PT_PROPERTY = "aeBasePt"


def text_scale(widget: QWidget) -> float:
    """The text scale `widget` is drawn at, so a width meant for 100% text can grow with it:
    its font's size over the size it had before presentation mode first scaled it (1.0 for a
    widget it never scaled; a widget with its own larger font reads 1.0 too)."""
    base = widget.property(BASE_PT_PROPERTY)
    size = widget.font().pointSizeF()
    return size / float(base) if base and size > 0 else 1.0


#: Dynamic property: a chart's minimum (width, height) at 100% text, which presentation mode
#: grows with the text scale (chart_minimum); a chart that needs more room for what it shows
#: sets it anew (set_chart_minimum).
BASE_MINIMUM_PROPERTY = "aeBaseMinimum"


def chart_minimum(base: tuple[int, int], scale: float) -> tuple[int, int]:
    """A chart's minimum (width, height) at text `scale`: each grows by half as much as the
    text. The title, tick labels and captions take more room at larger text and the plot must
    keep its own, so pages scroll down rather than squeeze a plot flat; yet at 1024×640 with
    150% text and the Lessons panel below, the Overview's page shows about 320 px, and the
    chart a lesson names must fit there whole (at the text's full growth the latency chart
    needed 360)."""
    growth = 1 + (scale - 1) / 2
    width, height = base
    return round(width * growth), round(height * growth)


def set_chart_minimum(view: QWidget, base: tuple[int, int], scale: float) -> None:
    """Give a chart a new minimum at 100% text, applied at text `scale` (and kept by
    presentation mode at the next scale)."""
    view.setProperty(BASE_MINIMUM_PROPERTY, base)
    view.setMinimumSize(*chart_minimum(base, scale))


def text_font(points: float, bold: bool = False, monospace: bool = False) -> QFont:
    """A widget's own font at `points`: set with setFont, never a style sheet's font-size,
    which presentation mode cannot scale (the label would stay small at 150% text)."""
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont) if monospace else QFont()
    font.setPointSizeF(points)
    font.setBold(bold)
    return font


def fit_tick_labels(plot: pg.PlotItem) -> None:
    """A bottom axis tall enough for its tick labels' whole line.

    pyqtgraph sizes an automatic-height axis for 0.8 × the labels' line height and draws them
    from its top, so the rest (the descender of "gru"; at 150% text its lower half) fell past
    the axis and was clipped. Its text height starts from the font's whole line instead, and
    only grows (for taller labels): left to shrink, one draw without ticks sets it to 0.
    """
    axis = plot.getAxis("bottom")
    if axis.fixedHeight is not None or not axis.style.get("showValues", True):
        return
    font = axis.style.get("tickFont") or QApplication.font()
    axis.setStyle(autoReduceTextSpace=False)
    axis.textHeight = QFontMetrics(font).height()
    axis._updateHeight()


def set_title(plot: pg.PlotItem, first: str, second: str | None = None) -> None:
    """A bold first line and an optional second line (HTML), on a pyqtgraph PlotItem.

    pyqtgraph fixes the title row at 30 px and sets the label's minimum width to its text;
    a two-line title needs a taller row, and a long one must not widen the plot beyond its
    widget (the right edge would be cut off): the title becomes a FitLabel, which shrinks
    to the plot's width, or wraps where it would have to shrink too far.
    """
    from autocast_explorer.gui.shell.fit_title import install

    label = install(plot)
    # Presentation mode (gui.presentation) scales titles per plot and re-sets the last one.
    scale = getattr(plot, "font_scale", 1.0)
    plot.title_args = (first, second)
    html = f"<b>{first}</b>"
    if second:
        html += f"<br><span style='font-size:{_points(SUBTITLE_SIZE, scale)}'>{second}</span>"
    plot.setTitle(html, size=_points(TITLE_SIZE, scale))
    height = round((50 if second else 30) * scale)
    label.row_height = height
    label.setMaximumHeight(height)
    plot.layout.setRowFixedHeight(0, height)
    label.setMinimumWidth(0)
    label.refit()


def _points(size: str, scale: float) -> str:
    """'13pt' scaled by `scale` ('19.5pt' at 1.5×)."""
    return f"{float(size.removesuffix('pt')) * scale:g}pt"


def apply_plot_style() -> None:
    """pyqtgraph's global options: must run before the first PlotWidget is created."""
    import pyqtgraph as pg

    pg.setConfigOptions(background="w", foreground=TEXT, antialias=True)


def apply_app_style(app: QApplication) -> None:
    """Fusion with a light palette, so the window looks the same on every desktop and Xvfb."""
    app.setStyle("Fusion")
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Window, QColor("#f4f5f7"))
    palette.setColor(QPalette.ColorRole.WindowText, QColor(TEXT))
    palette.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
    palette.setColor(QPalette.ColorRole.AlternateBase, QColor("#eef1f5"))
    palette.setColor(QPalette.ColorRole.Text, QColor(TEXT))
    palette.setColor(QPalette.ColorRole.Button, QColor("#e8eaed"))
    palette.setColor(QPalette.ColorRole.ButtonText, QColor(TEXT))
    palette.setColor(QPalette.ColorRole.ToolTipBase, QColor("#ffffe8"))
    palette.setColor(QPalette.ColorRole.ToolTipText, QColor(TEXT))
    palette.setColor(QPalette.ColorRole.Highlight, QColor("#3465a4"))
    palette.setColor(QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
    # setColor without a group sets every group: disabled controls must still look disabled.
    disabled = QPalette.ColorGroup.Disabled
    for role in (
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
    ):
        palette.setColor(disabled, role, QColor(DISABLED_TEXT))
    palette.setColor(disabled, QPalette.ColorRole.Button, QColor("#eef0f2"))
    app.setPalette(palette)
    font = app.font()
    font.setPointSize(10)
    app.setFont(font)

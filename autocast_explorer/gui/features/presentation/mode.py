"""Presentation mode: text scale, full screen, a projector theme and controls that can be hidden.

Why fonts are set widget by widget: Qt passes a window's font on only to children that never set
their own, and the charts draw with fonts of their own (pyqtgraph axes, titles, text items), so
scaling the window's font alone would leave headings and every chart label unchanged. Each widget
and chart item remembers its base size the first time it is scaled; applying a scale is therefore
idempotent and is repeated after every result, so items created later (new cells, new tabs) follow.

The projector theme is black on pure white and 1.25× larger, with bold chart text and 2 px
axes. Projectors wash out dark backgrounds in a lit room, so high contrast here means dark ink on
white, not white on black.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt, Slot
from PySide6.QtGui import QColor, QFont, QKeySequence, QPalette, QShortcut
from PySide6.QtWidgets import QApplication, QWidget

from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.handles import Handle
from autocast_explorer.gui.shell.keys import Shortcut, StandardKey
from autocast_explorer.gui.shell.style import chart_minimum

if TYPE_CHECKING:
    from autocast_explorer.gui.shell.context import AppContext

THEMES = ("standard", "projector")
#: The text scales Ctrl+= and Ctrl+- step through.
SCALES = (0.7, 0.8, 0.9, 1.0, 1.15, 1.3, 1.5, 1.75, 2.0, 2.5, 3.0)
MIN_SCALE, MAX_SCALE = SCALES[0], SCALES[-1]
#: The projector theme's own enlargement, on top of the text scale.
PROJECTOR_FACTOR = 1.25
PROJECTOR_INK = "#000000"
PROJECTOR_PAPER = "#ffffff"
PROJECTOR_AXIS_WIDTH = 2
#: How far a bottom tick label may reach past its axis before pyqtgraph drops it.
OVERHANG_PX = 40
#: Controls column width limits at scale 1 (main_window sets them; they grow with the text).
CONTROLS_MIN_WIDTH, CONTROLS_MAX_WIDTH = 330, 460
_BASE_PT = style.BASE_PT_PROPERTY
_BASE_BOLD = "aeBaseBold"
_EXPLICIT = "aeExplicitFont"
_BASE_MINIMUM = style.BASE_MINIMUM_PROPERTY


@dataclass(frozen=True)
class PresentationState:
    """What presentation mode remembers between sessions (gui.settings stores it)."""

    font_scale: float = 1.0
    theme: str = "standard"
    controls_hidden: bool = False

    def __post_init__(self) -> None:
        if self.theme not in THEMES:
            raise ValueError(f"theme must be one of {', '.join(THEMES)} (got {self.theme!r})")
        scale = self.font_scale
        if not isinstance(scale, int | float) or not MIN_SCALE <= scale <= MAX_SCALE:
            raise ValueError(f"font scale must be between {MIN_SCALE} and {MAX_SCALE}")


# ---- fonts ---------------------------------------------------------------------------------
def _remember_widget_font(widget: QWidget) -> tuple[float, bool, bool]:
    base = widget.property(_BASE_PT)
    if base is None:
        explicit = widget.testAttribute(Qt.WidgetAttribute.WA_SetFont)
        font = widget.font() if explicit else QApplication.font(widget)
        base = font.pointSizeF()
        if explicit:
            base = _own_size(widget, base)
        widget.setProperty(_BASE_PT, float(base))
        widget.setProperty(_BASE_BOLD, bool(font.bold()))
        widget.setProperty(_EXPLICIT, bool(explicit))
    return float(base), bool(widget.property(_BASE_BOLD)), bool(widget.property(_EXPLICIT))


def _own_size(widget: QWidget, size: float) -> float:
    """The size a widget's own font had before scaling. A font set only to be bold keeps
    inheriting its size: when its parent is already scaled (parents are scaled first), `size`
    is the parent's scaled size, and taking it as the base would scale the label twice."""
    parent = widget.parentWidget()
    parent_base = parent.property(_BASE_PT) if parent is not None else None
    if parent is None or parent_base is None:
        return size
    scaled = parent.font().pointSizeF()
    inherited = scaled != float(parent_base) and abs(size - scaled) < 1e-6
    return float(parent_base) if inherited else size


def scale_widget_fonts(root: QWidget, scale: float, bold: bool = False) -> None:
    """Every widget under `root` at `scale` × its own base size (bold on top when asked)."""
    for widget in (root, *root.findChildren(QWidget)):
        base, base_bold, explicit = _remember_widget_font(widget)
        if base <= 0:  # a font sized in pixels: leave it alone
            continue
        if scale == 1.0 and not bold and not explicit:
            widget.setFont(QFont())  # inherit again, as before presentation mode
            continue
        font = QFont(widget.font())
        font.setPointSizeF(base * scale)
        font.setBold(base_bold or bold)
        widget.setFont(font)


def _base_point_size(font: QFont | None) -> float:
    if font is not None and font.pointSizeF() > 0:
        return font.pointSizeF()
    return QApplication.font().pointSizeF()


def _scaled(base: float, scale: float, bold: bool, like: QFont | None = None) -> QFont:
    font = QFont(like) if like is not None else QFont()
    font.setPointSizeF(base * scale)
    if bold:
        font.setBold(True)
    return font


def _axis_base(axis: pg.AxisItem) -> dict:
    """The axis's own sizes before presentation mode touched it (remembered on first use)."""
    base = getattr(axis, "ae_base", None)
    if base is None:
        base = {
            "tick": _base_point_size(axis.style.get("tickFont")),
            "tick_bold": bool(axis.style.get("tickFont") and axis.style["tickFont"].bold()),
            "label": _base_point_size(axis.label.font()),
            "label_bold": axis.label.font().bold(),
            "height": axis.fixedHeight,
            "width": axis.fixedWidth,
            "density": getattr(axis, "_tickDensity", 1.0),
        }
        axis.ae_base = base
    return base


def fit_caption(axis: pg.AxisItem, room: float, scale: float) -> None:
    """Wrap a bottom/top axis caption wider than `room` pixels (else it is cut at both ends);
    a fixed-height axis grows by the extra lines."""
    if axis.orientation not in ("bottom", "top"):
        return
    base = _axis_base(axis)
    label = axis.label
    label.setTextWidth(-1)
    extra = 0.0
    if label.isVisible() and room > 40:
        one_line = label.boundingRect().height()
        if label.boundingRect().width() > room:
            label.setTextWidth(room)
            extra = label.boundingRect().height() - one_line
    h = base["height"]
    axis.setHeight(None if h is None else round(h * scale + extra))
    axis.resizeEvent()


def fit_captions(view: QWidget) -> None:
    """fit_caption for every axis of a PlotWidget, from the widget's current width."""
    if not isinstance(view, pg.PlotWidget):
        return
    plot = view.getPlotItem()
    left = plot.getAxis("left")
    room = view.width() - (left.width() if left.isVisible() else 0) - 16
    for name in ("bottom", "top"):
        axis = plot.getAxis(name)
        if axis.isVisible():
            fit_caption(axis, room, getattr(plot, "font_scale", 1.0))


def _scale_axis(axis: pg.AxisItem, scale: float, bold: bool, projector: bool) -> None:
    base = _axis_base(axis)
    axis.setTickFont(_scaled(base["tick"], scale, bold or base["tick_bold"]))
    # Larger labels need fewer automatic ticks or they run into each other.
    axis.setTickDensity(base["density"] / max(scale, 1.0))
    label_font = _scaled(base["label"], scale, bold or base["label_bold"], axis.label.font())
    axis.label.setFont(label_font)
    if axis.orientation in ("left", "right"):
        w = base["width"]
        axis.setWidth(None if w is None else round(w * scale))
    if projector:
        axis.setPen(pg.mkPen(PROJECTOR_INK, width=PROJECTOR_AXIS_WIDTH))
        axis.setTextPen(PROJECTOR_INK)
        axis.ae_pen = True
    elif getattr(axis, "ae_pen", False):
        axis.setPen()
        axis.setTextPen()
        axis.ae_pen = False
    axis.resizeEvent()


def _scale_text_item(item: pg.TextItem, scale: float, bold: bool) -> None:
    base = getattr(item, "ae_base", None)
    if base is None:
        font = item.textItem.font()
        base = (_base_point_size(font), font.bold())
        item.ae_base = base
    item.setFont(_scaled(base[0], scale, bold or base[1], item.textItem.font()))


def _scale_legend(legend: pg.LegendItem, scale: float) -> None:
    base = getattr(legend, "ae_base", None)
    if base is None:
        size = str(legend.opts.get("labelTextSize") or "9pt")
        base = float(size.removesuffix("pt")) if size.endswith("pt") else 9.0
        legend.ae_base = base
    legend.setLabelTextSize(f"{base * scale:g}pt")
    for _sample, label in legend.items:
        label.setText(label.text)


def _scale_label(label: pg.LabelItem, scale: float) -> None:
    base = getattr(label, "ae_base", None)
    if base is None:
        size = str(label.opts.get("size") or "")
        base = float(size.removesuffix("pt")) if size.endswith("pt") else None
        label.ae_base = base if base is not None else 0.0
    if base:
        label.setText(label.text, size=f"{base * scale:g}pt")


def _scale_minimum(view: pg.GraphicsView, scale: float) -> None:
    base = view.property(_BASE_MINIMUM)
    if base is None:
        base = (view.minimumWidth(), view.minimumHeight())
        view.setProperty(_BASE_MINIMUM, base)
    view.setMinimumSize(*chart_minimum(tuple(base), scale))


def scale_chart(view: pg.GraphicsView, scale: float, bold: bool, projector: bool) -> None:
    """Axes, titles, legends, text items and the minimum size of one pyqtgraph view at
    `scale`."""
    _scale_minimum(view, scale)
    titles = set()
    legends = []
    for item in list(view.scene().items()):
        if isinstance(item, pg.PlotItem):
            item.font_scale = scale
            if getattr(item, "title_args", None) is not None:
                style.set_title(item, *item.title_args)
                titles.add(id(item.titleLabel))
        elif isinstance(item, pg.AxisItem):
            _scale_axis(item, scale, bold, projector)
        elif isinstance(item, pg.LegendItem):
            legends.append(item)
        elif isinstance(item, pg.TextItem):
            _scale_text_item(item, scale, bold)
    legend_labels = {id(label) for legend in legends for _s, label in legend.items}
    for legend in legends:
        _scale_legend(legend, scale)
    fit_captions(view)
    for item in list(view.scene().items()):
        if (
            isinstance(item, pg.LabelItem)
            and id(item) not in titles
            and id(item) not in legend_labels
        ):
            _scale_label(item, scale)
    for item in list(view.scene().items()):
        if isinstance(item, pg.PlotItem):
            style.fit_tick_labels(item)
    refit = getattr(view, "fit_text", None)
    if callable(refit):  # hints, cell labels: sized for the old text (the plot may keep its size)
        refit()


def projector_palette() -> QPalette:
    """Black on pure white, a dark blue selection: the most contrast a projector keeps."""
    palette = QPalette(QApplication.palette())
    ink, paper = QColor(PROJECTOR_INK), QColor(PROJECTOR_PAPER)
    for role in (QPalette.ColorRole.Window, QPalette.ColorRole.Base):
        palette.setColor(QPalette.ColorGroup.Active, role, paper)
        palette.setColor(QPalette.ColorGroup.Inactive, role, paper)
    for role in (
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.Text,
        QPalette.ColorRole.ButtonText,
        QPalette.ColorRole.ToolTipText,
    ):
        palette.setColor(QPalette.ColorGroup.Active, role, ink)
        palette.setColor(QPalette.ColorGroup.Inactive, role, ink)
    palette.setColor(QPalette.ColorRole.AlternateBase, QColor("#e8ecf2"))
    palette.setColor(QPalette.ColorRole.Button, QColor("#e2e4e8"))
    palette.setColor(QPalette.ColorRole.Highlight, QColor("#002b80"))
    palette.setColor(QPalette.ColorRole.HighlightedText, paper)
    return palette


# ---- the controller ------------------------------------------------------------------------
class Presentation(QObject):
    """Owns the View menu's presentation actions and applies them to the window (and extras).

    `window.presentation` is this object; `state()` / `set_state()` are what settings store.
    """

    def __init__(self, ctx: AppContext) -> None:
        window = ctx.host()
        super().__init__(window)
        self.setObjectName("presentation")
        self._ctx = ctx
        self._window = window
        self._roots: list[QWidget] = [window]
        self.font_scale = 1.0
        self.theme = "standard"
        self.controls_hidden = False
        self._applied = False
        self._controls = ctx.controls_column()
        self._build_actions()
        # F5 / Esc while the Run and Cancel buttons are hidden with the controls (a hidden
        # button's own shortcut does not fire; both active at once would be ambiguous).
        self._run_key = QShortcut(QKeySequence(Qt.Key.Key_F5), window)
        self._run_key.activated.connect(self._run)
        self._cancel_key = QShortcut(QKeySequence(Qt.Key.Key_Escape), window)
        self._cancel_key.activated.connect(ctx.cancel)
        for key in (self._run_key, self._cancel_key):
            key.setEnabled(False)
        window.installEventFilter(self)
        ctx.resultShown.connect(self._on_result_shown)
        ctx.featuresInstalled.connect(self._follow_new_views)
        ctx.windowAdded.connect(self.add_root)
        self._watched: set[int] = set()
        self._watch_charts(window)

    def _build_actions(self) -> None:
        view = self._ctx.menu("&View")

        def action(text: str, tip: str, keys: list[Shortcut], slot, checkable: bool = False):
            return self._ctx.add_action(
                text, slot, menu=view, shortcut=keys, tip=tip, checkable=checkable
            )

        self.zoomInAction = action(
            "&Bigger text",
            "Scale all text and chart labels up",
            [StandardKey.ZoomIn, "Ctrl+="],  # Ctrl+= where + needs Shift
            self.zoom_in,
        )
        self.zoomOutAction = action(
            "&Smaller text",
            "Scale all text and chart labels down",
            [StandardKey.ZoomOut],
            self.zoom_out,
        )
        self.zoomResetAction = action(
            "&Normal text size",
            "Text and chart labels at their normal size",
            ["Ctrl+0"],
            self.zoom_reset,
        )
        view.addSeparator()
        self.fullScreenAction = action(
            "&Full screen",
            "Fill the screen with the window",
            [StandardKey.FullScreen],
            self.set_full_screen,
            True,
        )
        self.projectorAction = action(
            "&Projector theme",
            "High contrast for projectors: black on white, 1.25× larger, bold charts, thick axes",
            ["Ctrl+Shift+H"],
            self._on_projector_toggled,
            True,
        )
        self.hideControlsAction = action(
            "&Hide controls",
            "Hide the controls so the charts fill the window (F5 and Esc still run and cancel)",
            ["Ctrl+Shift+C"],  # not Ctrl+H: that is ⌘H, hide the application, on macOS
            self.set_controls_hidden,
            True,
        )

    # ---- state ----------------------------------------------------------------------------
    def state(self) -> PresentationState:
        return PresentationState(self.font_scale, self.theme, self.controls_hidden)

    def set_state(self, state: PresentationState) -> None:
        self.font_scale = state.font_scale
        self.theme = state.theme
        self.controls_hidden = state.controls_hidden
        self._sync_actions()
        self._apply_controls()
        self.apply()

    def effective_scale(self) -> float:
        factor = PROJECTOR_FACTOR if self.theme == "projector" else 1.0
        return round(self.font_scale * factor, 4)

    @Slot(QWidget)
    def add_root(self, widget: QWidget) -> None:
        """Another top-level window (Compare) that follows the text scale and theme."""
        if widget not in self._roots:
            self._roots.append(widget)
            widget.destroyed.connect(self._forget_roots)
            self._watch_charts(widget)
        if self._applied:
            self._apply_to(widget)

    @Slot()
    def _forget_roots(self) -> None:
        alive = []
        for root in self._roots:
            try:
                root.objectName()
            except RuntimeError:
                continue
            alive.append(root)
        self._roots = alive

    # ---- actions --------------------------------------------------------------------------
    @Slot()
    def zoom_in(self) -> None:
        bigger = [s for s in SCALES if s > self.font_scale + 1e-9]
        self.set_font_scale(bigger[0] if bigger else MAX_SCALE)

    @Slot()
    def zoom_out(self) -> None:
        smaller = [s for s in SCALES if s < self.font_scale - 1e-9]
        self.set_font_scale(smaller[-1] if smaller else MIN_SCALE)

    @Slot()
    def zoom_reset(self) -> None:
        self.set_font_scale(1.0)

    def set_font_scale(self, scale: float) -> None:
        scale = min(max(float(scale), MIN_SCALE), MAX_SCALE)
        if scale == self.font_scale:
            return
        self.font_scale = scale
        self.apply()
        self._window.statusBar().showMessage(f"Text at {scale:.0%}", 3000)

    @Slot(bool)
    def _on_projector_toggled(self, on: bool) -> None:
        self.set_theme("projector" if on else "standard")

    def set_theme(self, theme: str) -> None:
        if theme not in THEMES:
            raise ValueError(f"unknown theme {theme!r}")
        if theme == self.theme:
            return
        self.theme = theme
        self._sync_actions()
        self.apply()

    @Slot(bool)
    def set_full_screen(self, on: bool) -> None:
        w = self._window
        if on and not w.isFullScreen():
            w.showFullScreen()
        elif not on and w.isFullScreen():
            w.showNormal()
        self._sync_actions()

    @Slot(bool)
    def set_controls_hidden(self, hidden: bool) -> None:
        self.controls_hidden = bool(hidden)
        self._sync_actions()
        self._apply_controls()

    def _apply_controls(self) -> None:
        if self._controls is not None:
            self._controls.setVisible(not self.controls_hidden)
        for key in (self._run_key, self._cancel_key):
            key.setEnabled(self.controls_hidden)

    @Slot()
    def _run(self) -> None:
        self._ctx.run_experiment()

    def _sync_actions(self) -> None:
        for action, checked in (
            (self.fullScreenAction, self._window.isFullScreen()),
            (self.projectorAction, self.theme == "projector"),
            (self.hideControlsAction, self.controls_hidden),
        ):
            action.blockSignals(True)
            action.setChecked(checked)
            action.blockSignals(False)

    def _watch_charts(self, root: QWidget) -> None:
        """Refit axis captions whenever a chart changes size (narrow windows, docks)."""
        for view in root.findChildren(QWidget):
            if isinstance(view, pg.PlotWidget) and id(view) not in self._watched:
                self._watched.add(id(view))
                view.installEventFilter(self)
                # A tick label a few pixels past the axis end is drawn rather than dropped
                # (pyqtgraph hides it), so narrow charts keep their category labels.
                bottom = view.getPlotItem().getAxis("bottom")
                if bottom.style.get("hideOverlappingLabels") is True:
                    bottom.setStyle(hideOverlappingLabels=OVERHANG_PX)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.Resize and isinstance(watched, pg.PlotWidget):
            fit_captions(watched)
        elif kind == QEvent.Type.WindowStateChange and watched is self._window:
            self._sync_actions()
        return False

    # ---- applying -------------------------------------------------------------------------
    def is_default(self) -> bool:
        return self.font_scale == 1.0 and self.theme == "standard"

    def apply(self) -> None:
        """Apply the scale and theme to every root; a no-op at the defaults until first used."""
        if self.is_default() and not self._applied:
            return
        self._applied = True
        for root in list(self._roots):
            self._apply_to(root)

    def _apply_to(self, root: QWidget) -> None:
        projector = self.theme == "projector"
        scale = self.effective_scale()
        root.setPalette(projector_palette() if projector else QPalette())
        # Body text keeps its weight (bold paragraphs read worse); chart text goes bold.
        scale_widget_fonts(root, scale)
        for view in root.findChildren(QWidget):
            if isinstance(view, pg.GraphicsView):
                scale_chart(view, scale, projector, projector)
        if root is self._window and self._controls is not None:
            # As wide as its content needs at this text size, no wider: at 1024 px with the
            # Lessons panel every pixel more here is one less for the result tabs.
            self._controls.setMinimumWidth(
                max(CONTROLS_MIN_WIDTH, controls_content_width(self._controls))
            )
            self._controls.setMaximumWidth(round(CONTROLS_MAX_WIDTH * scale))

    @Slot(object)
    def _on_result_shown(self, _result: object) -> None:
        # Views may have made new chart items (cells, labels) or tabs: bring them to scale.
        self._follow_new_views()

    @Slot()
    def _follow_new_views(self) -> None:
        """Charts and tabs added since (a result's items, the tabs built after the first
        paint) take the text scale and theme too."""
        self._watch_charts(self._window)
        if self._applied:
            self._apply_to(self._window)


def controls_content_width(column: QWidget) -> int:
    """The width the controls column needs to show its inputs whole: its scrolling inputs'
    minimum (the scroll area never scrolls sideways) plus the vertical bar, or the footer's."""
    from PySide6.QtWidgets import QScrollArea

    need = column.minimumSizeHint().width()
    scroll = column.findChild(QScrollArea)
    page = scroll.widget() if scroll is not None else None
    if scroll is not None and page is not None:
        bar = scroll.verticalScrollBar().sizeHint().width()
        frame = 2 * scroll.frameWidth()
        need = max(need, page.minimumSizeHint().width() + bar + frame)
    return need


#: The text scale, theme and hidden controls (the settings keeper saves and restores them).
PRESENTATION = Handle("presentation", Presentation)


def install(ctx: AppContext) -> None:
    """The View menu's presentation actions; `window.presentation` afterwards."""
    ctx.publish(PRESENTATION, Presentation(ctx))

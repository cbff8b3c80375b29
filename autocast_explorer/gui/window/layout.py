"""The window's widgets that are layout only: the controls column, the results column with the
banner and the stale mark above the tabs, the splitter between them, the status bar labels.

Each builder returns its widget with its objectName set; the window keeps them as public
attributes (the tester's contract) and wires them up.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QApplication,
    QLabel,
    QProxyStyle,
    QScrollArea,
    QSplitter,
    QStatusBar,
    QStyle,
    QStyleFactory,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.gui.shell import style
from autocast_explorer.gui.shell.banner import BannerLabel
from autocast_explorer.gui.shell.elided import ElidedLabel
from autocast_explorer.gui.shell.reflow import ScrollingTabs


def controls_scroll(controls: QWidget) -> QScrollArea:
    scroll = QScrollArea()
    scroll.setObjectName("controlsScroll")
    scroll.setWidget(controls)
    scroll.setWidgetResizable(True)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return scroll


def controls_column(scroll: QScrollArea, footer: QWidget) -> QWidget:
    """The scrolling inputs with the Run footer under them (always in sight)."""
    column = QWidget()
    column.setObjectName("controlsColumn")
    column.setMinimumWidth(330)
    column.setMaximumWidth(460)
    layout = QVBoxLayout(column)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(0)
    layout.addWidget(scroll, 1)
    layout.addWidget(footer)
    return column


class CompactTabStyle(QProxyStyle):
    """The application's style with half its padding beside each tab's text: twelve tabs (now
    thirteen) at Fusion's 24 px each needed about 1000 px, so at 1280 px the last one, Hardware,
    was cut to "H" behind the scroll arrows."""

    TAB_PADDING = 12

    def pixelMetric(self, metric, option=None, widget=None) -> int:  # type: ignore[no-untyped-def]
        if metric == QStyle.PixelMetric.PM_TabBarTabHSpace:
            return self.TAB_PADDING
        return super().pixelMetric(metric, option, widget)


def result_tabs() -> ScrollingTabs:
    tabs = ScrollingTabs()
    tabs.setObjectName("resultTabs")
    tabs.setDocumentMode(True)
    # Built on the application's own style (without one, a proxy takes the desktop's).
    style = CompactTabStyle(QStyleFactory.create(QApplication.style().name()))
    style.setParent(tabs)  # a widget does not own the style it is given
    tabs.tabBar().setStyle(style)
    return tabs


def message_banner() -> BannerLabel:
    """What went wrong in the last run or file operation, above the tabs (hidden until then)."""
    banner = BannerLabel("")
    banner.setObjectName("messageBanner")
    banner.setWordWrap(True)
    banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    banner.setStyleSheet(
        f"color: {style.BAD}; background: {style.ERROR_BACKGROUND}; padding: 6px;"
        f"border: 1px solid {style.BAD}; border-radius: 4px; font-weight: bold;"
    )
    banner.setToolTip("What went wrong in the last run or file operation.")
    banner.hide()
    return banner


def results_column(banner: QLabel, stale: QLabel, tabs: QTabWidget) -> QWidget:
    column = QWidget()
    layout = QVBoxLayout(column)
    layout.setContentsMargins(0, 4, 4, 0)
    layout.addWidget(banner)
    layout.addWidget(stale)
    layout.addWidget(tabs, 1)
    return column


def main_splitter(left: QWidget, right: QWidget) -> QSplitter:
    """Controls left at their width, results right taking the rest; neither collapses."""
    splitter = QSplitter(Qt.Orientation.Horizontal)
    splitter.setObjectName("mainSplitter")
    splitter.addWidget(left)
    splitter.addWidget(right)
    splitter.setStretchFactor(0, 0)
    splitter.setStretchFactor(1, 1)
    splitter.setSizes([340, 940])
    splitter.setChildrenCollapsible(False)
    return splitter


def status_labels(bar: QStatusBar) -> tuple[ElidedLabel, QLabel]:
    """The verdict and the passing-message label, both permanent in `bar`.

    QStatusBar.showMessage hides (and paints over) normal widgets, so the verdict would vanish
    under "Text at 150%". Transient messages show in their own label to the right of the
    verdict (fed by messageChanged), and vanish when they expire.
    """
    verdict = ElidedLabel("", "The verdict of the last run (from core.summary.verdict).")
    verdict.setObjectName("verdictLabel")
    bar.addPermanentWidget(verdict, 1)
    message = QLabel("")
    message.setObjectName("statusMessageLabel")
    message.setToolTip("A passing message (a saved file, the text scale).")
    message.setStyleSheet(f"color: {style.MUTED};")
    message.hide()
    bar.addPermanentWidget(message)
    bar.messageChanged.connect(message.setText)
    bar.messageChanged.connect(lambda text: message.setVisible(bool(text)))
    return verdict, message

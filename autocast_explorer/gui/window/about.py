"""Help › About: the versions and the CPU facts every number in the window depends on.

The CPU facts come from core.hardware.environment(); this dialog only lays them out.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import pyqtgraph as pg
import PySide6
from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from autocast_explorer import __version__

if TYPE_CHECKING:
    from autocast_explorer.core.hardware.cpu import Environment


def _yes_no(value: bool | None) -> str:
    return "unknown" if value is None else "yes" if value else "no"


def about_rows(env: Environment | None) -> list[tuple[str, str]]:
    """(label, value) pairs shown in the dialog; torch facts only once torch has loaded."""
    rows = [
        ("Autocast Explorer", __version__),
        ("Qt", qVersion()),
        ("PySide6", PySide6.__version__),
        ("pyqtgraph", pg.__version__),
    ]
    if env is None:
        rows.append(("PyTorch", "still loading…"))
        return rows
    rows += [
        ("PyTorch", env.torch_version),
        ("Python", env.python),
        ("OS", env.os),
        ("CPU", env.cpu_model),
        ("torch CPU capability", env.cpu_capability),
        ("Low-precision flags", " ".join(env.cpu_flags) or "none found"),
        ("Flags read from", str(env.extra.get("flags_source", "/proc/cpuinfo"))),
        ("Native bfloat16", _yes_no(env.native_bf16)),
        ("Native float16", _yes_no(env.native_fp16)),
        ("oneDNN bfloat16 supported", _yes_no(env.torch_bf16_supported)),
        ("oneDNN float16 supported", _yes_no(env.torch_fp16_supported)),
        ("oneDNN (mkldnn) available", _yes_no(env.mkldnn)),
        ("Cores / torch threads", f"{env.cores} / {env.threads}"),
    ]
    return rows


class AboutDialog(QDialog):
    """Non-modal, so it never blocks a run or a test."""

    def __init__(self, env: Environment | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("aboutDialog")
        self.setWindowTitle("About Autocast Explorer")
        layout = QVBoxLayout(self)
        intro = QLabel(
            "<b>Autocast Explorer</b> measures what <code>torch.autocast('cpu')</code> does "
            "on <i>this</i> machine: latency, the dtype of every layer, and whether the "
            "predictions agree. Every number comes from the installed torch and this CPU."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        cells = "".join(
            f"<tr><td style='padding-right:12px'><b>{html.escape(k)}</b></td>"
            f"<td>{html.escape(v)}</td></tr>"
            for k, v in about_rows(env)
        )
        self.table = QLabel(f"<table>{cells}</table>")
        self.table.setObjectName("aboutTable")
        self.table.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.table)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout.addWidget(buttons)


def show_about(env: Environment | None, parent: QWidget, shown: QWidget | None) -> AboutDialog:
    """A fresh About dialog (the one `shown` before is closed: the engine may be loaded now)."""
    if shown is not None:
        shown.close()
        shown.deleteLater()
    dialog = AboutDialog(env, parent)
    dialog.show()
    return dialog

"""The flipped rows as pictures: each 8×8 digit (any small image) enlarged, with its true label,
float32's answer and autocast's answer; both margins on hover. Rows that are not images get a
table instead (index, label, both answers, both margins)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QImage, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGridLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.data.answers import AccuracyReport, FlippedRow

#: Thumbnails per row of the gallery, and the side each is drawn at.
COLUMNS = 6
TILE_PX = 96
TABLE_COLUMNS = ("Row", "Label", "float32", "float32 margin", "autocast", "autocast margin")


def row_image(values: tuple[float, ...], shape: tuple[int, ...], side: int) -> QImage:
    """A row of values as a grey image (ink dark on white), scaled up with square pixels.

    Only the first channel is drawn; values are stretched from the row's minimum to maximum.
    """
    height, width = shape[-2], shape[-1]
    plane = values[: height * width]
    low, high = min(plane), max(plane)
    span = (high - low) or 1.0
    pixels = bytes(255 - round(255 * (v - low) / span) for v in plane)
    image = QImage(pixels, width, height, width, QImage.Format.Format_Grayscale8).copy()
    return image.scaled(
        side, side, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.FastTransformation
    )


def tile_tooltip(flip: FlippedRow, dtype: str) -> str:
    return (
        f"Row {flip.index} of the data: true label {flip.label}.\n"
        f"float32 says {flip.plain} (margin {flip.plain_margin:.3g} over its runner-up);\n"
        f"{dtype} autocast says {flip.autocast} (margin {flip.autocast_margin:.3g})."
    )


class FlipTile(QWidget):
    """One flipped row: its picture and 'true 3 · fp32 5 · bf16 3' (right answers in green)."""

    def __init__(self, flip: FlippedRow, shape: tuple[int, ...], dtype: str) -> None:
        super().__init__()
        self.setObjectName("flipTile")
        self.flip = flip
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(2)
        picture = QLabel()
        picture.setObjectName("flipImage")
        picture.setPixmap(QPixmap.fromImage(row_image(flip.x, shape, TILE_PX)))
        picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        picture.setStyleSheet(f"border: 1px solid {style.MUTED};")
        short = {"bfloat16": "bf16", "float16": "fp16"}.get(dtype, dtype)

        def answer(name: str, value: int) -> str:
            color = style.OK if value == flip.label else style.BAD
            return f"<span style='color:{color}'>{name} <b>{value}</b></span>"

        caption = QLabel(
            f"true <b>{flip.label}</b><br>{answer('fp32', flip.plain)} · "
            f"{answer(short, flip.autocast)}"
        )
        caption.setObjectName("flipCaption")
        caption.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(picture)
        layout.addWidget(caption)
        tip = tile_tooltip(flip, dtype)
        for widget in (self, picture, caption):
            widget.setToolTip(tip)


class FlipGallery(QWidget):
    """objectName `flipGallery`: a FlipTile per flipped image row (`flipTile` children)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("flipGallery")
        self.setToolTip("The held-out rows whose predicted class changed under autocast.")
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(0, 0, 0, 0)
        self._grid.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)

    def show_flips(self, acc: AccuracyReport, shape: tuple[int, ...]) -> None:
        self.clear()
        drawable = [f for f in acc.flipped if len(f.x) == math.prod(shape)]
        for i, flip in enumerate(drawable):
            self._grid.addWidget(FlipTile(flip, shape, acc.dtype), i // COLUMNS, i % COLUMNS)

    def tiles(self) -> list[FlipTile]:
        items = (self._grid.itemAt(i) for i in range(self._grid.count()))
        return [w for item in items if item and isinstance(w := item.widget(), FlipTile)]

    def clear(self) -> None:
        while self._grid.count():
            item = self._grid.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()


def flip_table(name: str, tip: str) -> QTableWidget:
    """The flipped rows of data that are not images: one line each."""
    table = QTableWidget(0, len(TABLE_COLUMNS))
    table.setObjectName(name)
    table.setToolTip(tip)
    table.setHorizontalHeaderLabels(TABLE_COLUMNS)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.verticalHeader().setVisible(False)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    return table


def fill_flip_table(table: QTableWidget, acc: AccuracyReport) -> None:
    table.setRowCount(len(acc.flipped))
    for r, f in enumerate(acc.flipped):
        cells = (
            str(f.index),
            str(f.label),
            str(f.plain),
            f"{f.plain_margin:.3g}",
            str(f.autocast),
            f"{f.autocast_margin:.3g}",
        )
        for c, text in enumerate(cells):
            item = QTableWidgetItem(text)
            if c in (2, 4):
                right = int(text) == f.label
                item.setForeground(QColor(style.OK if right else style.BAD))
            table.setItem(r, c, item)

"""Writing a chart to PNG or SVG with pyqtgraph's exporters, atomically.

Exporters render to memory (`toBytes=True`) and core.files.write_atomic writes the file, so a
failed export never leaves half an image behind.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QBuffer, QIODevice

from autocast_explorer.core.documents.files import write_atomic

#: PNGs are rendered at twice the on-screen width so slides stay sharp.
PNG_SCALE = 2
FORMATS = {".png": "PNG image (*.png)", ".svg": "SVG image (*.svg)"}


def close_paths_explicitly(d: str) -> str:
    """SVG path data with each 'Z' replaced by a line back to its subpath's start point.

    pyqtgraph 0.14.0's SVG exporter parses every path token as 'x,y' and fails on the 'Z'
    that Qt 6's QSvgGenerator writes for closed paths (pyqtgraph issue #3495, fixed after
    0.14.0). An explicit line to the start draws the same shape.
    """
    tokens: list[str] = []
    start: str | None = None
    for token in d.split():
        if token[:1] in ("M", "m"):
            start = token[1:]
        if token in ("Z", "z"):
            if start is not None:
                tokens.append(f"L{start}")
            continue
        tokens.append(token)
    return " ".join(tokens)


def _install_svg_closed_path_fix() -> None:
    """Wrap pyqtgraph's correctCoordinates once so it never sees a 'Z' (see above)."""
    module: Any = importlib.import_module("pyqtgraph.exporters.SVGExporter")  # untyped, patched
    original = module.correctCoordinates
    if getattr(original, "_closes_paths", False):
        return

    def correct_coordinates(node: Any, *args: Any, **kwargs: Any) -> Any:
        for path in node.getElementsByTagName("path"):
            d = path.getAttribute("d")
            if "Z" in d or "z" in d:
                path.setAttribute("d", close_paths_explicitly(d))
        return original(node, *args, **kwargs)

    correct_coordinates._closes_paths = True  # type: ignore[attr-defined]
    module.correctCoordinates = correct_coordinates


def chart_bytes(plot: pg.PlotWidget, suffix: str) -> bytes:
    """The chart rendered as PNG or SVG bytes (suffix '.png' or '.svg')."""
    from pyqtgraph.exporters import ImageExporter, SVGExporter

    item = plot.getPlotItem()
    if suffix == ".svg":
        _install_svg_closed_path_fix()
        return bytes(SVGExporter(item).export(toBytes=True))
    if suffix != ".png":
        raise ValueError(f"unsupported image format {suffix!r}: use .png or .svg")
    exporter = ImageExporter(item)
    width = max(int(item.sceneBoundingRect().width()), 1) * PNG_SCALE
    exporter.parameters()["width"] = width
    image = exporter.export(toBytes=True)
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise OSError("could not encode the PNG image")
    return bytes(buffer.data().data())


def export_chart(plot: pg.PlotWidget, path: str | Path) -> Path:
    """Write `plot` to `path`; the format follows the suffix (.png or .svg)."""
    target = Path(path)
    return write_atomic(target, chart_bytes(plot, target.suffix.lower()))

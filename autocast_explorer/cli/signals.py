"""Ctrl-C (SIGINT) and SIGTERM for the command line: one line, exit 130 or 143, nothing partial.

Python raises KeyboardInterrupt wherever the main thread happens to be. Inside Qt that is
fatal: raised during shiboken's lazy start-up it aborts the process ("libshiboken/signature:
could not initialize part 2"), raised inside a virtual override such as QGraphicsView.paintEvent
it is swallowed, and a few land in C++ frames that crash. So around work that must not be torn
(Qt drawing offscreen, writing the files of a result) signals are *deferred*: the handler only
notes them, and the interruption is raised the moment the region ends, before anything is
swapped in. Everywhere else it is raised at once, as Python does.

Exit codes follow the shell convention 128 + signal number: 130 for SIGINT, 143 for SIGTERM.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import ClassVar, NoReturn

from autocast_explorer.exit_codes import signal_exit_code

HANDLED = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A signal asked the command to stop; `exit_code` is 128 + the signal number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return signal_exit_code(self.signum)

    @property
    def word(self) -> str:
        return "terminated" if self.signum == signal.SIGTERM else "interrupted"


class _State:
    depth = 0
    pending: int | None = None
    early: ClassVar[list[int]] = []
    tail = False  # a command ran and left its signals to _tail_handler
    stopping = False  # interrupted: further signals are ignored while it winds down


def note_early(signums: list[int]) -> None:
    """The list the script's first lines note signals in, until `installed` takes over:
    `raise_early` then interrupts the command at once."""
    _State.early = signums


def raise_early() -> None:
    """Raise Interrupted for a signal that came before the handlers were installed."""
    if _State.early:
        signum = _State.early[0]
        _State.early = []
        raise Interrupted(signum)


def restore_defaults() -> None:
    """Python's own handlers (for the window, which handles Ctrl-C itself)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _handler(signum: int, _frame: FrameType | None) -> None:
    if _State.depth > 0:
        if _State.pending is None:
            _State.pending = signum
        return
    raise Interrupted(signum)


def _tail_handler(signum: int, _frame: FrameType | None) -> None:
    """After the command: the outputs are complete, the process is on its way out. Raising
    now would land in the interpreter's shutdown, ignoring would drop the request: say so in
    one line and leave at once with the signal's exit code."""
    word = Interrupted(signum).word
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    with contextlib.suppress(OSError):
        os.write(2, f"{word} (after all outputs were written)\n".encode())
    os._exit(signal_exit_code(signum))


@contextlib.contextmanager
def installed(restore: bool = True) -> Iterator[None]:
    """Handle SIGINT and SIGTERM while the block runs (main thread only); restore afterwards,
    or (`restore=False`, the script about to exit) hand them to `_tail_handler`: a signal after
    the work is done must neither raise inside the interpreter's shutdown nor be ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[signal.Signals, Callable | int | None] = {
        s: signal.getsignal(s) for s in HANDLED
    }
    _State.depth, _State.pending, _State.stopping = 0, None, False
    for signum in HANDLED:
        signal.signal(signum, _handler)
    try:
        yield
    finally:
        _State.tail = not restore
        for signum, handler in previous.items():
            if not restore:
                handler = signal.SIG_IGN if _State.stopping else _tail_handler
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        _State.depth, _State.pending = 0, None


def command_ran() -> bool:
    """True once a command (not the window) ran with the script's handlers: exit_now then."""
    return _State.tail


def exit_now(code: int) -> NoReturn:
    """End the script with `code` once its output is flushed, without the interpreter's slow
    teardown (torch's and Qt's): every output is already on disk (fsync'd), and a signal in
    that last second would otherwise meet a half-finalized interpreter."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def ignore_further() -> None:
    """While the command winds down after a signal, a second one must not tear the cleanup."""
    if threading.current_thread() is threading.main_thread():
        _State.stopping = True
        for signum in HANDLED:
            signal.signal(signum, signal.SIG_IGN)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Note signals instead of raising them inside the block; raise on leaving it."""
    _State.depth += 1
    try:
        yield
    finally:
        _State.depth -= 1
    raise_pending()


def raise_pending() -> None:
    """Raise Interrupted for a signal noted during a deferred region (outside any region)."""
    if _State.depth == 0 and _State.pending is not None:
        signum, _State.pending = _State.pending, None
        raise Interrupted(signum)

"""Ctrl-C (SIGINT) and SIGTERM for the command line: one line, exit 130 or 143, nothing partial.

Python raises KeyboardInterrupt wherever the main thread happens to be. Inside Qt that is
fatal: raised during shiboken's lazy start-up it aborts the process ("libshiboken/signature:
could not initialize part 2"), raised inside a virtual override such as QGraphicsView.paintEvent
it is swallowed, and a few land in C++ frames that crash. So around work that must not be torn
(Qt drawing offscreen, writing the files of a result) signals are *deferred*: the handler only
notes them, and the interruption is raised the moment the region ends, before anything is
swapped in. Everywhere else it is raised at once, as Python does.

Exit codes follow the shell convention 128 + signal number: 130 for SIGINT, 143 for SIGTERM.

Two things Python's handlers cannot do alone:
- a child process (inductor's C++ compiler) outlives us, or is SIGKILLed by subprocess.run
  and leaves its temporary files: before the interruption is raised, every child is ended
  (core.runtime.children: SIGTERM, then SIGKILL);
- a handler runs only between bytecodes of the main thread, so one torch op running for
  minutes (a huge model's first forward) would hold the signal that long. A watchdog thread
  hears every signal at once (signal.set_wakeup_fd); when the main thread has not taken it
  within STUCK_AFTER_S outside a deferred region, the watchdog ends the children, writes the
  one line and leaves with the signal's exit code without waiting for the op.
A kill -9 cannot be handled by any program: its children finish on their own.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import ClassVar, NoReturn

# Imported here, not in the handlers: a handler may interrupt an import in progress.
from autocast_explorer.core.runtime.children import descendants, end_children
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


#: Seconds a signal waits for the main thread before the watchdog ends the process.
STUCK_AFTER_S = 2.0


class _State:
    depth = 0
    pending: int | None = None
    early: ClassVar[list[int]] = []
    tail = False  # a command ran and left its signals to _tail_handler
    stopping = False  # interrupted: further signals are ignored while it winds down
    taken = 0  # signals the main thread's handler has run for (the watchdog compares)


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
    _State.taken += 1
    if _State.depth > 0:
        if _State.pending is None:
            _State.pending = signum
        return
    _end_children()
    raise Interrupted(signum)


def _end_children() -> None:
    """Before the interruption unwinds (and subprocess.run SIGKILLs its child), the children
    get SIGTERM; a second signal meanwhile must not cut that short."""
    if descendants():
        ignore_further()
        end_children()


def _tail_handler(signum: int, _frame: FrameType | None) -> None:
    """After the command: the outputs are complete, the process is on its way out. Raising
    now would land in the interpreter's shutdown, ignoring would drop the request: say so in
    one line and leave at once with the signal's exit code."""
    word = Interrupted(signum).word
    with contextlib.suppress(OSError, ValueError, AttributeError):
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
    watchdog = _Watchdog.start()
    try:
        yield
    finally:
        if watchdog is not None:
            watchdog.stop()
        _State.tail = not restore
        for signum, handler in previous.items():
            if not restore:
                handler = signal.SIG_IGN if _State.stopping else _tail_handler
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        _State.depth, _State.pending = 0, None


class _Watchdog:
    """Hears each signal through a wakeup pipe; ends the process when the main thread is held
    inside one operation past STUCK_AFTER_S (see the module)."""

    def __init__(self, read_fd: int, write_fd: int, previous: int) -> None:
        self.read_fd, self.write_fd, self.previous = read_fd, write_fd, previous
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="signal watchdog", daemon=True)

    @classmethod
    def start(cls) -> _Watchdog | None:
        """A running watchdog (None on Windows, whose wakeup needs a socket)."""
        if sys.platform == "win32":
            return None
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)
        previous = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        watchdog = cls(read_fd, write_fd, previous)
        watchdog.thread.start()
        return watchdog

    def stop(self) -> None:
        self.stopped.set()
        signal.set_wakeup_fd(self.previous)
        os.close(self.write_fd)  # the thread's read sees the end
        self.thread.join(timeout=5)
        os.close(self.read_fd)

    def _watch(self) -> None:
        while not self.stopped.is_set():
            taken = _State.taken  # read before the signal comes: its handler counts past it
            try:
                data = os.read(self.read_fd, 64)
            except OSError:
                return
            if not data:
                return
            ours = [signum for signum in data if signum in HANDLED]
            if ours:
                self._wait_for_main_thread(taken, ours[0])

    def _wait_for_main_thread(self, taken: int, signum: int) -> None:
        """Return once the main thread's handler ran (or the command ended); end the process
        when the main thread is held outside a deferred region, and not yet winding down,
        past STUCK_AFTER_S."""
        since = time.monotonic()
        while _State.taken == taken and not self.stopped.wait(0.05):
            held = _State.depth == 0 and not _State.stopping
            if held and time.monotonic() - since > STUCK_AFTER_S:
                _leave_held(signum)


def _leave_held(signum: int) -> NoReturn:
    """The watchdog's end: the children ended, one line, the signal's exit code."""
    end_children()
    word = Interrupted(signum).word
    with contextlib.suppress(OSError):
        os.write(2, f"{word} (one operation was still running; ended without it)\n".encode())
    os._exit(signal_exit_code(signum))


def command_ran() -> bool:
    """True once a command (not the window) ran with the script's handlers: exit_now then."""
    return _State.tail


def exit_now(code: int) -> NoReturn:
    """End the script with `code` once its output is flushed, without the interpreter's slow
    teardown (torch's and Qt's): every output is already on disk (fsync'd), and a signal in
    that last second would otherwise meet a half-finalized interpreter."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
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

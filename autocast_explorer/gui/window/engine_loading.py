"""Loading torch and the engine off the GUI thread, with Run enabled the moment torch is in.

Start-up is bound by the one interpreter lock, not by cores: importing torch holds it throughout
(even while the dynamic loader maps libtorch), and so does building widgets or importing
pydantic. Work done beside the import only delays it, so nothing stands between the first paint
and torch: the loader imports torch first and asks the window to go on (TaskState.ask); the
window enables Run, lists its presets and imports the packages both threads share
(SHARED_IMPORTS), then answers; only then does the loader import the engine and describe this
machine (`engineReady`), and the window builds the tabs its first picture does not show.

Two threads importing the same package at once can see it half initialised (pydantic resolves
its names by imports of its own, on first use): hence the handshake, and the shared packages
imported on the GUI thread before the loader imports the engine. A Run pressed before the
engine is in waits for the loader (wait_for_engine_imports) on its worker: a fraction of a
second, shown as "Loading the engine…".
"""

from __future__ import annotations

import gc
import importlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autocast_explorer.core.hardware.cpu import Environment
    from autocast_explorer.gui.tasks.runner import TaskState

LOADING_TEXT = "Loading PyTorch…"
ENGINE_TEXT = "Loading the engine…"
#: What the loader asks once torch is imported (a partial result; the window answers when its
#: own imports are done).
TORCH_LOADED = "torch-loaded"

#: Imported on the GUI thread before the loader imports the engine: the pure-Python packages the
#: GUI thread and the engine both import (the preset list, opened files and the engine all read
#: documents), and the torch-free document layer built on them. None of them imports torch.
SHARED_IMPORTS = ("pydantic", "pydantic.dataclasses", "autocast_explorer.core.documents.model")

_loaders = threading.Condition()
_loading = 0


def import_shared_packages() -> None:
    """Import SHARED_IMPORTS on the calling thread (the GUI thread, before the engine's)."""
    for name in SHARED_IMPORTS:
        importlib.import_module(name)


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection inside the block: while torch imports, every collection
    walks the objects the window already holds as well (import torch took about 1.1 s in the
    window's process with collections and 0.93 s without, on a 2-core EPYC)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def importing_engine() -> Iterator[None]:
    """Marks the block as a loader importing the engine (see wait_for_engine_imports)."""
    global _loading
    with _loaders:
        _loading += 1
    try:
        yield
    finally:
        with _loaders:
            _loading -= 1
            _loaders.notify_all()


def wait_for_engine_imports(
    cancelled: Callable[[], bool],
    poll_s: float = 0.05,
    waiting: Callable[[], object] | None = None,
) -> None:
    """Return once no loader is importing the engine (at once when none is), or on cancel: a
    run started as soon as torch was in must not import the engine beside the loader.
    `waiting` is called once, only when there is something to wait for (to say so)."""
    with _loaders:
        if _loading and waiting is not None:
            waiting()
        while _loading and not cancelled():
            _loaders.wait(poll_s)


def load_engine_task(state: TaskState) -> Environment:
    """Import torch, ask the window to go on, then import the engine; returns this machine's
    Environment (Cancelled when the window closed before it answered)."""
    with importing_engine(), paused_gc():
        state.set_progress(0.05, LOADING_TEXT)
        import torch  # noqa: F401  (the slow part: seconds on a cold disk)

        state.ask(TORCH_LOADED)
        state.check()  # the window closed meanwhile
        state.set_progress(0.8, ENGINE_TEXT)
        from autocast_explorer.core.experiment import engine, summary  # noqa: F401
        from autocast_explorer.core.hardware import cpu as hardware_facts

        return hardware_facts.environment()

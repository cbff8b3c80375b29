"""Loading torch and the engine off the GUI thread, as early as is safe.

Start-up is bound by the one interpreter lock, not by cores: importing torch holds it throughout
(even while the dynamic loader maps libtorch), and so does building widgets. A loader running
beside the GUI thread's work makes neither faster; Run is ready as soon as the work before it is
done. So the app's window paints, lists its presets, starts the loader, and builds the tabs its
first picture does not show only once the engine has loaded (main_window.py).

Two threads importing the same package at once can see it half initialised (pydantic resolves
its names by imports of its own, on first use): the pure-Python packages that both the GUI
thread and the engine import are imported on the GUI thread before the loader starts.
"""

from __future__ import annotations

import gc
import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autocast_explorer.core.hardware.cpu import Environment
    from autocast_explorer.gui.tasks.runner import TaskState

LOADING_TEXT = "Loading PyTorch…"

#: Imported on the GUI thread before the loader starts: the pure-Python packages the GUI thread
#: and the engine both import (the preset list, opened files and the engine all read documents),
#: and the torch-free document layer built on them. None of them imports torch.
SHARED_IMPORTS = ("pydantic", "pydantic.dataclasses", "autocast_explorer.core.documents.model")


def import_shared_packages() -> None:
    """Import SHARED_IMPORTS on the calling thread (the GUI thread, before the loader starts)."""
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


def load_engine_task(state: TaskState) -> Environment:
    """Import torch and the engine off the GUI thread; returns this machine's Environment."""
    with paused_gc():
        state.set_progress(0.05, LOADING_TEXT)
        import torch  # noqa: F401  (the slow part: seconds on a cold disk)

        state.set_progress(0.8, "Loading the engine…")
        from autocast_explorer.core.experiment import summary  # noqa: F401
        from autocast_explorer.core.hardware import cpu as hardware_facts

        return hardware_facts.environment()

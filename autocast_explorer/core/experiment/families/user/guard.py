"""One guard around every place the user's code runs: its import and factory, the probe, and
each phase of a run after it (capture, trace, timing, routes, training, accuracy, sweep points,
reproduce.py).

Whatever the user's code raises inside `UserCode(spec, phase)` — any BaseException but those
that end the program — leaves as one UserModelError line, the same at every phase:
`model: my_model.py:build: timing the forwards: my_model.py:12: RuntimeError: …` (the spec,
the phase, the innermost frame in the user's file, the error). It is a ConfigError of field
"model", so the CLI prints it and exits 2 and the window shows it under the model field with the
shown result kept. What is not the user's code failing passes through as it came.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from types import TracebackType

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families.user.errors import from_exception
from autocast_explorer.core.experiment.families.user.spec import parse_spec
from autocast_explorer.core.experiment.out_of_memory import is_out_of_memory
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.core.runtime.progress import Cancelled

#: Raised through as they came, wherever they start: Ctrl-C and a signal end the program. A
#: SystemExit inside a guard is the user's code calling sys.exit: its failure ("called
#: sys.exit(3)"), never a silent end with that code.
ENDS_THE_PROGRAM: tuple[type[BaseException], ...] = (KeyboardInterrupt,)
#: The program's own outcomes, also passed through: a refused input (a ConfigError is already
#: its one line; an inner guard's line keeps its own phase) and a cancel. Memory running out is
#: one too (guards.memory_outcome words it), told by `is_out_of_memory`.
OWN_OUTCOMES: tuple[type[BaseException], ...] = (ConfigError, Cancelled)


def is_the_users(exc: BaseException) -> bool:
    """Whether `exc`, raised inside a guard, is the user's code failing."""
    if isinstance(exc, ENDS_THE_PROGRAM + OWN_OUTCOMES):
        return False
    return not is_out_of_memory(exc)


def user_paths(text: str) -> tuple[str, ...]:
    """What counts as the user's code of spec `text` when naming a frame: a file spec's file,
    a module spec's folder (the working directory until it is imported); none for a library's
    model (the innermost frame outside torch and this program is named instead)."""
    spec = parse_spec(text)
    if spec.kind == "file":
        return (os.path.abspath(os.path.expanduser(spec.target)),)
    if spec.kind == "module":
        origin = getattr(sys.modules.get(spec.target), "__file__", None)
        return (os.path.dirname(origin),) if origin else (os.getcwd(),)
    return ()


class UserCode:
    """`with UserCode(spec, phase):` around a call into the user's code: its failure is one
    UserModelError line naming `phase` (a spec of '' guards nothing: built-in code failing is
    this program's bug, and keeps its traceback)."""

    def __init__(self, spec: str, phase: str, paths: Iterable[str] | None = None) -> None:
        self.spec = spec
        self.phase = phase
        self.paths = tuple(paths) if paths is not None else None

    def __enter__(self) -> UserCode:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None or not self.spec or not is_the_users(exc):
            return
        paths = self.paths if self.paths is not None else user_paths(self.spec)
        raise from_exception(self.spec, exc, paths, self.phase) from None


def user_phase(config: ExperimentConfig, phase: str) -> UserCode:
    """The guard of one phase of `config`'s run: its own model's code, if it is one."""
    return UserCode(config.model if config.is_user_model else "", phase)

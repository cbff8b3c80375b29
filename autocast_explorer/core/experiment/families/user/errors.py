"""A user's code failing, as one line: the spec, the innermost frame in the user's code, the error.

`my_model.py:build: my_model.py:12: RuntimeError: mat1 and mat2 shapes cannot be multiplied …`
A ConfigError on field "model", so the CLI prints it and exits 2 and the window shows it under
the model field, as for any other bad input.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Iterable

from autocast_explorer.core.runtime.errors import ConfigError


class UserModelError(ConfigError):
    """Building or running the user's model failed; the message names where."""

    def __init__(self, spec: str, message: str) -> None:
        super().__init__("model", f"{spec}: {message}")
        self.spec = spec


def error_line(exc: BaseException) -> str:
    """'RuntimeError: first lines of the message' without a C++ backtrace; 'called
    sys.exit(3)' for a SystemExit (the user's code ending the process is its failure)."""
    if isinstance(exc, SystemExit):
        code = "" if exc.code is None else repr(exc.code)
        return f"called sys.exit({code})"[:500]
    text = str(exc).strip().split("\nException raised from")[0].strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()][:3]
    return f"{type(exc).__name__}: {' '.join(lines)}"[:500]


def user_frame(exc: BaseException, user_paths: Iterable[str] = ()) -> str:
    """'file.py:12' of the innermost traceback frame in one of `user_paths` (files or folders);
    without one there, the innermost frame outside torch and this program (a library's own
    file, e.g. transformers'), else '' (torch refused an input the user's code never saw)."""
    frames = traceback.extract_tb(exc.__traceback__)
    roots = [os.path.realpath(p) for p in user_paths]
    ours = [os.path.dirname(os.path.dirname(os.path.dirname(__file__))), _torch_dir()]

    def mine(filename: str) -> bool:
        path = os.path.realpath(filename)
        return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)

    chosen = next((f for f in reversed(frames) if roots and mine(f.filename)), None)
    if chosen is None:
        chosen = next(
            (
                f
                for f in reversed(frames)
                if not any(os.path.realpath(f.filename).startswith(o + os.sep) for o in ours if o)
            ),
            None,
        )
    if chosen is None:
        return ""
    return f"{os.path.basename(chosen.filename)}:{chosen.lineno}"


def _torch_dir() -> str:
    import importlib.util

    spec = importlib.util.find_spec("torch")
    origin = spec.origin if spec is not None else None
    return os.path.realpath(os.path.dirname(origin)) if origin else ""


def from_exception(
    spec: str, exc: BaseException, user_paths: Iterable[str] = (), what: str = ""
) -> UserModelError:
    """The one-line error for `exc` raised by the user's code (`what`: 'the forward', …)."""
    frame = user_frame(exc, user_paths)
    where = f"{frame}: " if frame else ""
    lead = f"{what}: " if what else ""
    return UserModelError(spec, f"{lead}{where}{error_line(exc)}")

"""While a command runs the user's code (its import, factory, every forward of every phase),
stdout belongs to the documents: `--json -` and `--csv -` must parse, and the summary must not
carry the model's prints. So the user's stdout goes to stderr, at two levels:

- Python's: `sys.stdout` is stderr inside the block (print, sys.stdout.write, logging to it);
- the process's: file descriptor 1 is pointed at stderr (os.dup2), for what bypasses Python —
  a C++ extension's printf or std::cout, oneDNN's verbose lines (ONEDNN_VERBOSE=1), a child
  process the model starts (os.system, subprocess) — which would otherwise land in the JSON.

The command writes its own rows through the stream the block yields (the real stdout), and
everything is put back when the block ends, before the outputs are published (`/dev/stdout`
then names stdout again). Where sys.stdout is not descriptor 1 (a test's capture, an embedding
program), only the Python level is swapped. The prints are redirected, not kept: nothing to
count, and a model printing megabytes costs no memory. A SystemExit from the user's code is its
failure (one line naming the spec, exit 2), not the end of the command with the code it chose.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import TextIO

from autocast_explorer.cli.signals import deferred
from autocast_explorer.core.experiment.config import ExperimentConfig


@contextlib.contextmanager
def running_user_code(config: ExperimentConfig) -> Iterator[TextIO]:
    """The block's stdout goes to stderr (both levels, see the module); yields the documents'
    stream. A SystemExit inside is the user's model failing, as a UserModelError."""
    with _stdout_to_stderr() as documents:
        try:
            yield documents
        except SystemExit as exc:
            if not config.is_user_model:
                raise
            from autocast_explorer.core.experiment.families.user.errors import from_exception

            raise from_exception(config.model, exc) from None


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[TextIO]:
    original = sys.stdout
    descriptor = _own_descriptor(original)
    documents: TextIO = original
    saved = -1
    _flush_all(original)
    if descriptor:
        saved = os.dup(1)
        documents = io.TextIOWrapper(
            open(saved, "wb"),  # noqa: SIM115 - closed (with `saved`) when the block ends
            encoding=getattr(original, "encoding", None) or "utf-8",
            errors=getattr(original, "errors", None) or "strict",
            line_buffering=getattr(original, "line_buffering", True),
        )
        os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        yield documents
    finally:
        with deferred():  # a signal here must not leave descriptor 1 on stderr
            sys.stdout = original
            _flush_all(sys.stderr)
            if descriptor:
                with contextlib.suppress(OSError, ValueError):  # a reader gone: BrokenPipe
                    documents.flush()
                os.dup2(saved, 1)
                with contextlib.suppress(OSError, ValueError):
                    documents.close()  # and `saved` with it


def _own_descriptor(stream: TextIO) -> bool:
    """True when `stream` writes to this process's descriptor 1 (the real stdout)."""
    try:
        return stream.fileno() == 1
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False


def _flush_all(stream: TextIO | None) -> None:
    """Python's buffer of `stream` and C's stdio buffers: what was printed before the swap
    leaves by the descriptor it was meant for (`stream` None: Python has no stdout)."""
    from autocast_explorer.core.hardware.onednn import flush_c_stdio

    with contextlib.suppress(OSError, ValueError, AttributeError):
        stream.flush()  # type: ignore[union-attr]
    flush_c_stdio()

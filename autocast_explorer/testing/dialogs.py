"""Answer QFileDialog's static methods from a test, and record what was asked.

A real file dialog is modal: a test that triggers one waits forever for a person. The window's
file actions have path-taking methods (`save_result(path)`, `open_result(path)` …) for tests
and scripts; this stub is for exercising the menu entries themselves, or anything else that
still asks for a file. Answers are queued in order; a dialog opened with nothing queued fails
the test and names the dialog, instead of hanging or silently cancelling.
"""

from __future__ import annotations

import fnmatch
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

#: QFileDialog's static methods that ask for a path (their Url twins are answered the same way).
PATH_METHODS = ("getOpenFileName", "getOpenFileNames", "getSaveFileName", "getExistingDirectory")
URL_METHODS = ("getOpenFileUrl", "getOpenFileUrls", "getSaveFileUrl", "getExistingDirectoryUrl")


class UnexpectedFileDialog(AssertionError):
    """A file dialog opened and no answer was queued for it."""


@dataclass(frozen=True)
class DialogRequest:
    """One dialog the code under test opened: which method, its caption, start folder, filter."""

    method: str
    caption: str
    directory: str
    filter: str
    #: What the stub answered: a path, a list of paths (getOpenFileNames), or None (cancelled).
    answer: str | list[str] | None


class _Cancel:
    def __repr__(self) -> str:
        return "CANCEL"


CANCEL = _Cancel()


class FileDialogStub:
    """Replaces QFileDialog's static methods; `answer(...)` queues what the next dialog returns.

    `asked` lists every dialog opened (a DialogRequest each), in order.
    """

    def __init__(self) -> None:
        self.asked: list[DialogRequest] = []
        self._answers: deque[Any] = deque()

    # ---- what a test calls -------------------------------------------------------------
    def answer(self, *paths: str | Path | Iterable[str | Path]) -> None:
        """Queue answers, one per dialog: a path, or a list of paths for getOpenFileNames."""
        for item in paths:
            if isinstance(item, str | Path):
                self._answers.append(str(item))
            else:
                self._answers.append([str(p) for p in item])

    def cancel(self) -> None:
        """Queue a Cancel: the next dialog returns '' (or an empty list), as Qt's does."""
        self._answers.append(CANCEL)

    def pending(self) -> int:
        """Answers queued and not used yet."""
        return len(self._answers)

    # ---- what replaces QFileDialog -------------------------------------------------------
    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from PySide6.QtWidgets import QFileDialog

        for method in PATH_METHODS + URL_METHODS:
            monkeypatch.setattr(QFileDialog, method, staticmethod(self._replacement(method)))

    def _replacement(self, method: str):
        def ask(*args: Any, **kwargs: Any) -> Any:
            caption, directory, filters = _dialog_arguments(args, kwargs)
            return self._reply(method, caption, directory, filters)

        ask.__name__ = method
        return ask

    def _reply(self, method: str, caption: str, directory: str, filters: str) -> Any:
        if not self._answers:
            self.asked.append(DialogRequest(method, caption, directory, filters, None))
            raise UnexpectedFileDialog(
                f"QFileDialog.{method} opened ({caption!r}) with no answer queued: call "
                "file_dialogs.answer(path) or file_dialogs.cancel() before triggering it, "
                "or call the window's path-taking method instead"
            )
        answer = self._answers.popleft()
        many = method in ("getOpenFileNames", "getOpenFileUrls")
        if answer is CANCEL:
            recorded = None
            paths: list[str] = []
        else:
            paths = answer if isinstance(answer, list) else [answer]
            recorded = paths if many else paths[0]
            if not many and isinstance(answer, list):
                raise UnexpectedFileDialog(
                    f"QFileDialog.{method} ({caption!r}) returns one path, but a list was queued"
                )
        self.asked.append(DialogRequest(method, caption, directory, filters, recorded))
        chosen_filter = matching_filter(filters, paths[0]) if paths else ""
        if method == "getExistingDirectory":
            return paths[0] if paths else ""
        if method == "getExistingDirectoryUrl":
            return _url(paths[0] if paths else "")
        if method in URL_METHODS:
            urls = [_url(p) for p in paths]
            return (urls if many else (urls[0] if urls else _url(""))), chosen_filter
        return (paths if many else (paths[0] if paths else "")), chosen_filter


def _url(path: str) -> Any:
    from PySide6.QtCore import QUrl

    return QUrl.fromLocalFile(path) if path else QUrl()


def _dialog_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, str, str]:
    """(caption, directory, filter) from QFileDialog's positional or keyword arguments."""
    names = ("parent", "caption", "dir", "filter")
    values = dict(zip(names, args, strict=False))
    values.update(kwargs)
    directory = values.get("dir", values.get("directory", ""))
    return str(values.get("caption", "") or ""), str(directory or ""), str(values.get("filter", ""))


def matching_filter(filters: str, path: str) -> str:
    """The entry of a ';;' filter list whose pattern matches `path` (else the first, or '')."""
    entries = [f for f in filters.split(";;") if f.strip()]
    name = Path(path).name
    for entry in entries:
        patterns = re.findall(r"\(([^)]*)\)", entry)
        for pattern in " ".join(patterns).split():
            if fnmatch.fnmatch(name.lower(), pattern.lower()):
                return entry
    return entries[0] if entries else ""

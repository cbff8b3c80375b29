"""Every JSON document the program writes during the tests is checked against its published
schema: the five document classes' `to_json` (which every writer — CLI, window, report, preset
save, plan — goes through) are wrapped for the whole session, so a writer and its schema cannot
drift apart unnoticed. A violation fails the test that wrote the document.

Four of those classes live in modules that import torch (seconds), so they are not imported
here: each is wrapped when its module is first imported (an import hook), or at session start
when collection imported it already. A test file that needs no torch then starts at once.

The suite also uses the tester's kit the way a tester's project does. Installed, the package
registers `autocast_explorer.testing` through its `pytest11` entry point; a source checkout that
was never installed has none, so it is named here too. Both register it under the same name, so
it is loaded once either way.

A test that asks for the kit's window (`explorer`, or `window` built on it) is marked `window`
here, so `make test-fast` can leave the ~200 window tests to `make test`.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Iterator, Sequence
from functools import wraps
from types import ModuleType
from typing import Any

import pytest

from tests.schema_check import VALIDATED, check_document

pytest_plugins = ["autocast_explorer.testing", "pytester"]

#: Module → the document class in it whose `to_json` every writer goes through.
WRITERS = {
    "autocast_explorer.core.experiment.result": "ExperimentResult",
    "autocast_explorer.core.sweeps.result": "SweepResult",
    "autocast_explorer.core.numerics.opresult": "ProbeResult",
    "autocast_explorer.core.learning.presets": "Preset",
    "autocast_explorer.core.planning.document": "PlanDocument",
}

#: Class → its own `to_json`, for the classes wrapped so far (restored at session end).
_ORIGINALS: dict[Any, Callable[..., str]] = {}


def _validating(to_json: Callable[..., str]) -> Callable[..., str]:
    @wraps(to_json)
    def to_json_checked(self: Any, *args: Any, **kwargs: Any) -> str:
        text = to_json(self, *args, **kwargs)
        check_document(text)
        return text

    return to_json_checked


def _wrap_writer(module: ModuleType) -> None:
    cls = getattr(module, WRITERS[module.__name__])
    if cls not in _ORIGINALS:
        _ORIGINALS[cls] = cls.to_json
        cls.to_json = _validating(cls.to_json)


class _WrappingLoader(importlib.abc.Loader):
    """Runs the module as its own loader would, then wraps its writer class."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        _wrap_writer(module)

    def __getattr__(self, name: str) -> Any:  # get_source, get_filename … for tracebacks
        return getattr(self._loader, name)


class _WrapWritersOnImport(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in WRITERS:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _WrappingLoader(spec.loader)
        return spec


@pytest.fixture(autouse=True, scope="session")
def documents_match_their_schemas() -> Iterator[None]:
    hook = _WrapWritersOnImport()
    sys.meta_path.insert(0, hook)
    for name in WRITERS:
        if name in sys.modules:
            _wrap_writer(sys.modules[name])
    yield
    sys.meta_path.remove(hook)
    for cls, to_json in _ORIGINALS.items():
        cls.to_json = to_json
    _ORIGINALS.clear()


#: Fixtures that build the kit's MainWindow (about 1 s of CPU per test).
WINDOW_FIXTURES = frozenset({"explorer", "window"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if WINDOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.window)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under xdist a worker hands its counts to the controller, which prints the summary."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["documents_validated"] = dict(VALIDATED)


@pytest.hookimpl(optionalhook=True)  # xdist's hook: absent with `-p no:xdist`
def pytest_testnodedown(node: Any, error: Any) -> None:
    for tag, count in getattr(node, "workeroutput", {}).get("documents_validated", {}).items():
        VALIDATED[tag] = VALIDATED.get(tag, 0) + count


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if VALIDATED:
        counts = ", ".join(f"{tag.split('/')[1]} {n}" for tag, n in sorted(VALIDATED.items()))
        terminalreporter.write_line(f"documents validated against their schemas: {counts}")

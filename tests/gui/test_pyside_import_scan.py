"""The window's process answers PySide6's per-import question ("does this module's source say
PySide6?") from the file's bytes: the same answer as PySide6's own, without filling linecache
with the source of every module imported after it (torch's ~840 files)."""

from __future__ import annotations

import linecache
import sys
from collections.abc import Callable
from types import ModuleType

import pytest

import autocast_explorer.gui.window.app  # noqa: F401  (importing it installs the quick answer)
from autocast_explorer.gui.window import pyside_import_scan

feature = sys.modules[pyside_import_scan.FEATURE_MODULE]


def test_importing_the_app_module_installs_it_once():
    quick = getattr(feature, pyside_import_scan.QUESTION)
    assert callable(quick.pyside_answer)  # PySide6's own answer, kept for what has no .py file
    assert pyside_import_scan.scan_imports_quickly() is False  # installed already: unchanged
    assert getattr(feature, pyside_import_scan.QUESTION) is quick


def test_it_gives_pysides_own_answer_for_every_module_loaded_here():
    quick = getattr(feature, pyside_import_scan.QUESTION)
    modules = [m for m in list(sys.modules.values()) if isinstance(m, ModuleType)]
    answers = {m.__name__: outcome(quick, m) for m in modules}
    assert answers == {m.__name__: outcome(quick.pyside_answer, m) for m in modules}
    # Both answers occur: the window's own modules say PySide6, the standard library does not
    # (and an extension module, with no source, is answered by PySide6's own code).
    assert answers["autocast_explorer.gui.window.app"] is True
    assert answers["json"] is False and answers["PySide6.QtCore"] is False


def outcome(answer: Callable[[ModuleType], bool], module: ModuleType) -> bool | str:
    """The answer, or the exception it raised: PySide6's own raises for a few objects that are
    in sys.modules without being imported (torch.classes answers every attribute it is asked
    for, `__wrapped__` included); the quick answer must raise just the same."""
    try:
        return answer(module)
    except Exception as error:  # what is raised is the outcome compared
        return type(error).__name__


@pytest.mark.parametrize(
    ("source", "selection"),
    [("X = 1\n", -1), ("from PySide6.QtCore import QObject\n", 0)],
    ids=["plain", "uses-pyside"],
)
def test_a_module_imported_now_is_registered_without_reading_it_into_linecache(
    tmp_path, monkeypatch, source, selection
):
    name = f"scan_probe_{selection + 1}_{tmp_path.name.replace('-', '_')}"
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    __import__(name)  # an import statement's path (PySide6 hooks builtins.__import__)
    assert feature.pyside_feature_dict[name] == selection  # as PySide6 itself registers it
    assert str(path) not in linecache.cache

"""The command line runs where Qt cannot be installed (an Arm server without a PySide6 wheel).

Each command runs in a fresh interpreter whose import system refuses PySide6, shiboken6 and
pyqtgraph, through the same entry point as `python -m autocast_explorer`; it must succeed, and
no Qt module may even have been asked for.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.process  # every test here starts a fresh Python

QT = ("PySide6", "shiboken6", "pyqtgraph")
HARNESS = """
import importlib.abc, json, sys
asked = []
class NoQt(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in QT:
            asked.append(name)
            raise ImportError(f'{name} is not installed (headless test)')
        return None
QT = ('PySide6', 'shiboken6', 'pyqtgraph')
sys.meta_path.insert(0, NoQt())
sys.argv = ['autocast-explorer', *json.loads(sys.argv[1])]
import os
def leave(code):  # a command leaves through os._exit once its outputs are out: report first
    raise SystemExit(code)
os._exit = leave
from autocast_explorer.__main__ import entry
try:
    code = entry()
except SystemExit as done:
    code = done.code
loaded = sorted(n for n in sys.modules if n.split('.')[0] in QT)
print(json.dumps({'code': code, 'asked': asked, 'loaded': loaded}), file=sys.stderr)
"""

TINY = ["--min-time", "0.02", "--threads", "1"]


def headless(args: list[str]) -> tuple[dict, str]:
    """Run one command with Qt refused; (the harness's report, stdout + stderr before it)."""
    done = subprocess.run(
        [sys.executable, "-c", HARNESS, json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    *said, last = done.stderr.strip().splitlines()
    return json.loads(last), done.stdout + "\n".join(said)


@pytest.fixture(scope="module")
def result_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("headless") / "r.json"
    report, _ = headless(["run", "--widths", "16,8,4", "--batch", "4", *TINY, "--json", str(path)])
    assert report == {"code": 0, "asked": [], "loaded": []}
    return path


def test_run_writes_its_result_without_qt(result_file):
    data = json.loads(result_file.read_text())
    assert data["layers"][0]["autocast"]["out"] in ("bfloat16", "float32")
    assert data["output_dtype"]["plain"] == "float32"


@pytest.mark.parametrize(
    ("args", "expect"),
    [
        (["sweep", "--widths", "16,8,4", "--values", "1,4", "--no-onednn", *TINY], "Verdict: "),
        (["ops", "--op", "linear,relu"], "linear"),
        (["run", "--model", "rnn", "--cell", "gru", "--seq", "3", "--hidden", "8", *TINY], "GRU"),
    ],
    ids=["sweep", "ops", "run-rnn"],
)
def test_every_command_runs_without_qt(args, expect):
    report, out = headless(args)
    assert report == {"code": 0, "asked": [], "loaded": []}
    assert expect in out


def test_compare_runs_without_qt(result_file):
    report, out = headless(["compare", str(result_file), str(result_file)])
    assert report == {"code": 0, "asked": [], "loaded": []}
    assert "speedup" in out


def test_the_window_without_qt_is_one_line_and_exit_1():
    report, out = headless([])
    assert report["code"] == 1 and report["loaded"] == []
    assert report["asked"][0].startswith("PySide6")
    (line,) = out.strip().splitlines()
    assert line.startswith("error: the window needs PySide6 and pyqtgraph")

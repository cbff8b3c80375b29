"""The user's code cannot corrupt what the command writes: its prints (at import, in the
factory, in every forward) go to stderr, so stdout holds the document alone (`--json -`,
`--csv -`, the summary, the sweep's table); and a model that changes the working folder does
not move a relative `--json`: outputs are resolved before the user's code runs.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from autocast_explorer.cli import main
from tests.fuzz.user_files import PLACES, QUICK, QUICK_SWEEP, model_file

PRINTS = 'print("USER-PRINT", flush=True); sys.stdout.write("USER-WRITE\\n")'


def _json_document(out: str) -> None:
    assert json.loads(out)["config"]["model"].endswith(":build")


def _csv_rows(out: str) -> None:
    rows = list(csv.reader(io.StringIO(out)))
    assert len(rows) >= 2 and all(len(row) == len(rows[0]) for row in rows), out


def _summary(out: str) -> None:
    assert out.startswith("Autocast Explorer · m.py:build"), out[:200]
    assert "Verdict:" in out


def _sweep_table(out: str) -> None:
    assert out.startswith("Autocast Explorer sweep · batch over 2 values (m.py:build)"), out[:200]
    lines = out.splitlines()
    assert [lines[2].split()[0], lines[3].split()[0]] == ["1", "2"]  # one row per point


#: Each command's stdout and what it must hold: (arguments, a check that it is the document).
DOCUMENTS: dict[str, tuple[list[str], Callable[[str], None]]] = {
    "run --json -": (["run", *QUICK, "--json", "-"], _json_document),
    "run --csv -": (["run", *QUICK, "--csv", "-"], _csv_rows),
    "run summary": (["run", *QUICK], _summary),
    "sweep --json -": (["sweep", *QUICK_SWEEP, "--values", "1,2", "--json", "-"], _json_document),
    "sweep --csv -": (["sweep", *QUICK_SWEEP, "--values", "1,2", "--csv", "-"], _csv_rows),
    "sweep table": (["sweep", *QUICK_SWEEP, "--values", "1,2"], _sweep_table),
}


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("command", sorted(DOCUMENTS))
def test_the_users_prints_go_to_stderr_not_into_the_document(tmp_path, capsys, place, command):
    args, is_document = DOCUMENTS[command]
    spec = model_file(tmp_path, PRINTS, place)
    assert main([*args, "--model", spec]) == 0
    out, err = capsys.readouterr()
    assert "USER-" not in out
    assert "USER-PRINT\nUSER-WRITE\n" in err
    is_document(out)


def test_a_model_printing_megabytes_leaves_the_json_whole(tmp_path, capsys):
    spec = model_file(tmp_path, 'print("x" * 4_000_000)', "factory")
    assert main(["run", *QUICK, "--json", "-", "--model", spec]) == 0
    out, err = capsys.readouterr()
    _json_document(out)
    assert err.count("x" * 4_000_000) >= 1  # on stderr, whole


CHDIR = (
    'moved = os.path.join(os.path.dirname(__file__), "moved"); '
    "os.makedirs(moved, exist_ok=True); os.chdir(moved)"
)


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_model_that_changes_folder_does_not_move_relative_outputs(
    tmp_path, monkeypatch, capsys, place, command
):
    monkeypatch.chdir(tmp_path)  # and back after the test, wherever the model went
    spec = model_file(tmp_path, CHDIR, place)
    extra = QUICK if command == "run" else [*QUICK_SWEEP, "--values", "1,2"]
    assert main([command, *extra, "--model", spec, "--json", "r.json", "--csv", "r.csv"]) == 0
    assert Path.cwd() == tmp_path / "moved"  # the model did move
    assert json.loads((tmp_path / "r.json").read_text())["config"]["model"] == spec
    _csv_rows((tmp_path / "r.csv").read_text())
    assert os.listdir(tmp_path / "moved") == []
    capsys.readouterr()


#: A factory printing by every route that bypasses Python's sys.stdout: the descriptor itself
#: (as C++ would) and a child process it starts (in the factory: a child per forward is slow).
BYPASS = 'print("PY-PRINT"); os.write(1, b"FD-PRINT\\n"); os.system("echo CHILD-PRINT")'
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.process
@pytest.mark.parametrize("output", ["-", "/dev/stdout"])
def test_prints_past_python_stay_out_of_stdout(tmp_path, output):
    spec = model_file(tmp_path, BYPASS, "factory")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "autocast_explorer",
            "run",
            *QUICK,
            "--model",
            spec,
            "--csv",
            output,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    _csv_rows(proc.stdout)  # the CSV reaches stdout, through /dev/stdout too
    assert "PRINT" not in proc.stdout
    for word in ("PY-PRINT", "FD-PRINT", "CHILD-PRINT"):
        assert word in proc.stderr


@pytest.mark.process
def test_a_closed_stdout_still_ends_cleanly(tmp_path):
    """`>&-`: Python has no sys.stdout; the run writes its --json and exits 0, no traceback."""
    spec = model_file(tmp_path, PRINTS, "forward")
    command = [sys.executable, "-m", "autocast_explorer", "run", *QUICK, "--model", spec]
    proc = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", *command, "--json", "r.json"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "USER-PRINT" in proc.stderr
    _json_document((tmp_path / "r.json").read_text())

"""The user's code ending the process or running out of memory, at any phase, is one line with
the documented exit code and no output file:

- `sys.exit(N)` at import, in the factory or in a forward (the probe's, or later while
  measuring) is the user's failure: `error: model: SPEC: …: called sys.exit(N)`, exit 2 — never
  the exit code the model chose, never exit 0 with nothing written;
- memory running out while the user's model is built, probed or measured is the out-of-memory
  outcome (exit 1, `error: out of memory[ at POINT]: …`), its estimate never made by running
  the model again (which ran out a second time inside the handler: a chained traceback);
- a user's own RuntimeError that merely says "out of memory" is not the allocator's.

Allocators are never really exhausted: a fake raises torch's exact words.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import autocast_explorer.core.experiment.families.construct.common as construct_common
from autocast_explorer.cli import main
from tests.fuzz.conftest import snapshot
from tests.fuzz.test_out_of_memory import TORCH_OOM
from tests.fuzz.user_files import PLACES, QUICK, QUICK_SWEEP, model_file


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    _out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


#: sys.exit's argument and the words the line gives it.
EXITS = {"0": "sys.exit(0)", "3": "sys.exit(3)", "'bye'": "sys.exit('bye')", "": "sys.exit()"}


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("argument", sorted(EXITS))
@pytest.mark.parametrize("command", ["run", "sweep"])
def test_sys_exit_in_the_users_code_is_one_line_and_exit_2(
    tmp_path, capsys, place, argument, command
):
    spec = model_file(tmp_path, f"sys.exit({argument})", place)
    outputs = tmp_path / "out"
    outputs.mkdir()
    extra = QUICK if command == "run" else [*QUICK_SWEEP, "--values", "1,2"]
    json_path = str(outputs / "r.json")
    assert main([command, *extra, "--model", spec, "--json", json_path, "--csv", "-"]) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"error: model: {spec}: ")
    assert line.endswith(f"m.py:{_line_of(place)}: called {EXITS[argument]}"), line
    assert snapshot(outputs) == {}  # no --json, nothing half-written


def _line_of(place: str) -> int:
    """The template's line the snippet lands on (user_files._TEMPLATE)."""
    return {"import": 3, "forward": 11, "factory": 15}[place]


@pytest.mark.parametrize(
    ("command", "phase"), [("run", "the first (cold) calls"), ("sweep", "sweep point batch 16")]
)
def test_sys_exit_while_measuring_not_probing_is_the_users_failure_too(
    tmp_path, capsys, command, phase
):
    """Batch 16 is measured but never probed (the probe runs batch 1 and 8): the line names
    the phase, as for any other failure of the user's code there."""
    spec = model_file(tmp_path, "if x.shape[0] >= 16: sys.exit(4)", "forward")
    extra = ["--batch", "16"] if command == "run" else ["--values", "1,16"]
    args = [command, *QUICK[:4], *extra, "--model", spec]
    assert main(args + (["--no-onednn"] if command == "sweep" else [])) == 2
    line = _one_error_line(capsys)
    assert line == f"error: model: {spec}: {phase}: m.py:11: called sys.exit(4)"


# ---- out of memory ------------------------------------------------------------------------
#: An input of more elements than this "cannot be allocated" (the fake allocator below).
HUGE = 10**7


@pytest.fixture
def small_allocator(monkeypatch):
    """Drawing an input over HUGE elements raises what torch's CPU allocator raises."""
    draw = construct_common.draw_input

    def refusing(config, shape):
        if math.prod(shape) > HUGE:
            raise RuntimeError(TORCH_OOM)
        return draw(config, shape)

    monkeypatch.setattr(construct_common, "draw_input", refusing)


def _oom_line(capsys: pytest.CaptureFixture[str], at: str = "") -> str:
    line = _one_error_line(capsys)
    assert line.startswith(f"error: out of memory{at}: the allocator refused 1,024 MB; "), line
    return line


@pytest.mark.usefixtures("small_allocator")
@pytest.mark.parametrize("mode", ["infer", "train"])
def test_out_of_memory_in_the_users_probe_is_one_line_without_probing_again(tmp_path, capsys, mode):
    spec = model_file(tmp_path)
    args = ["run", *QUICK, "--model", spec, "--input-shape", "4096,4096", "--mode", mode]
    assert main([*args, "--json", str(tmp_path / "r.json")]) == 1
    line = _oom_line(capsys)
    assert "the memory guard had no estimate (building or probing the model at batch 1" in line
    assert not (tmp_path / "r.json").exists()


@pytest.mark.usefixtures("small_allocator")
@pytest.mark.parametrize("human", [True, False], ids=["table", "json"])
def test_out_of_memory_probing_a_sweep_point_names_the_point(tmp_path, capsys, human):
    spec = model_file(tmp_path)
    args = ["sweep", *QUICK_SWEEP, "--model", spec, "--input-shape", "3,8,8"]
    args += ["--param", "image", "--values", "8,4096"] + ([] if human else ["--json", "-"])
    assert main(args) == 1
    line = _oom_line(capsys, " at image 4096")
    assert "had no estimate" in line


@pytest.mark.parametrize("human", [True, False], ids=["table", "json"])
@pytest.mark.parametrize("batch", [8, 16], ids=["time-probe", "measuring"])
def test_a_sweep_point_the_allocator_refuses_is_the_out_of_memory_outcome(
    tmp_path, capsys, human, batch
):
    """Batch 8 is first met by the time guard's probe (before any point), 16 while measuring."""
    code = f"if x.shape[0] >= {batch}: raise RuntimeError({TORCH_OOM!r})"
    spec = model_file(tmp_path, code, "forward")
    args = ["sweep", *QUICK_SWEEP, "--model", spec, "--values", f"1,{batch}"]
    assert main(args + ([] if human else ["--json", "-"])) == 1
    line = _oom_line(capsys, f" at batch {batch}")
    assert "the memory guard estimated a peak of" in line


@pytest.mark.parametrize("words", ["my cache is out of memory", "bad_alloc in my own parser"])
def test_a_users_error_saying_out_of_memory_is_not_the_allocators(tmp_path, capsys, words):
    """Raised under autocast only: an autocast finding (exit 0), not 'out of memory'."""
    code = f"if torch.is_autocast_enabled('cpu'): raise RuntimeError({words!r})"
    spec = model_file(tmp_path, code, "forward")
    assert main(["run", *QUICK, "--model", spec, "--json", "-"]) == 0
    out, err = capsys.readouterr()
    assert "out of memory" not in err
    assert json.loads(out)["autocast_error"] == f"RuntimeError: {words}"


def test_a_users_error_saying_out_of_memory_in_the_probe_names_the_model(tmp_path, capsys):
    spec = model_file(tmp_path, "raise RuntimeError('the cache is out of memory')", "forward")
    assert main(["run", *QUICK, "--model", spec]) == 2
    line = _one_error_line(capsys)
    assert re.fullmatch(
        rf"error: model: {re.escape(spec)}: the forward \(input 1×8 float32\): m\.py:11: "
        r"RuntimeError: the cache is out of memory",
        line,
    ), line


# ---- the compiled route's cache folder ------------------------------------------------------
ROOT = Path(__file__).resolve().parents[2]


#: Inductor cache folders that cannot be made: (id, TORCHINDUCTOR_CACHE_DIR, "{tmp}" the case's
#: folder, which holds FILE (a file), loop (a link to itself) and gone (a link to /proc/nope)).
CACHES = {
    "under-proc": "/proc/nope",
    "under-a-file": "{tmp}/FILE/sub",
    "through-a-link-loop": "{tmp}/loop/sub",
    "through-a-link-to-proc": "{tmp}/gone/sub",
}
CACHE_FINDING = ("not compiled: torch.compile could not start here (", "; inductor's cache "
                 "folder (TORCHINDUCTOR_CACHE_DIR) must be writable")  # fmt: skip


def _run_with_cache(tmp_path: Path, cache: str, args: list[str]) -> subprocess.CompletedProcess:
    (tmp_path / "FILE").write_text("a file, not a folder")
    (tmp_path / "loop").symlink_to("loop")
    (tmp_path / "gone").symlink_to("/proc/nope")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "TORCHINDUCTOR_CACHE_DIR": CACHES[cache].format(tmp=tmp_path),
    }
    return subprocess.run(
        [sys.executable, "-m", "autocast_explorer", *args, "--routes", "eager,compiled"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=tmp_path,
    )


def _is_cache_finding(finding: str) -> bool:
    return finding.startswith(CACHE_FINDING[0]) and finding.endswith(CACHE_FINDING[1])


@pytest.mark.process
@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc (Linux)")
@pytest.mark.parametrize("cache", CACHES)
def test_an_unwritable_inductor_cache_is_the_compiled_routes_finding(tmp_path, cache):
    """torch._dynamo's import makes the cache folder: refused there, the route says so."""
    proc = _run_with_cache(tmp_path, cache, ["run", "--widths", "8,4", *QUICK, "--json", "r.json"])
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    routes = json.loads((tmp_path / "r.json").read_text())["routes"]
    compiled = next(route for route in routes if route["name"] == "compiled")
    assert _is_cache_finding(compiled["finding"]), compiled["finding"]


@pytest.mark.process
@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc (Linux)")
@pytest.mark.parametrize("cache", ["under-proc", "under-a-file"])
def test_an_unwritable_inductor_cache_is_each_sweep_points_finding(tmp_path, cache):
    """Every point of a sweep says why it was not compiled, stdout holding the document only."""
    args = ["sweep", "--widths", "8,4", *QUICK_SWEEP, "--values", "1,2", "--json", "-"]
    proc = _run_with_cache(tmp_path, cache, args)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    points = json.loads(proc.stdout)["points"]
    findings = [r["finding"] for p in points for r in p["routes"] if r["name"] == "compiled"]
    assert len(findings) == 2 and all(map(_is_cache_finding, findings)), findings

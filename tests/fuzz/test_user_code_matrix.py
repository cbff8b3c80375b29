"""Every phase that runs the user's code × every way that code can fail × every command that
reaches the phase. Each case is one `error:` line naming the spec, the phase and the user's
frame (after the user's own prints, which go to stderr), exit 2, stdout holding no document
(a sweep's table: only the points finished before), and no output file left anywhere, whole,
half-written or temporary: not where the outputs were asked, not where the user's code moved
the working folder, not in the fallback folder a failed output would use.

The ways to fail and the factory are faulty_models.py's. The commands ask every output they
can write by relative paths from a working folder (resolved before the user's code runs); the
CLI runs in-process on tiny sizes. A phase a command never reaches is not a case: a sweep and
`--mode train` record and trace no layers, `--placements` and `--routes implicit` are
inference-only, a checkpoint needs `--data`. test_user_code_phases.py holds the single cases
(the training refusal, a module failing at import, BatchNorm at a batch of one).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autocast_explorer.cli import main
from autocast_explorer.core.documents.files import FALLBACK_DIR_ENV
from tests.fuzz.conftest import snapshot
from tests.fuzz.faulty_models import ERRORS, MARKERS, line_of, write_files

FAST = ["--min-time", "0.01", "--threads", "1"]
OUTPUTS = ["--json", "r.json", "--csv", "r.csv", "--report", "report"]
#: Each command: its arguments, every output it can write asked by a relative path.
COMMANDS: dict[str, list[str]] = {
    "run": ["run", *OUTPUTS],
    "run --json -": ["run", *OUTPUTS[2:], "--json", "-"],
    "run --csv -": ["run", *OUTPUTS[:2], *OUTPUTS[4:], "--csv", "-"],
    "sweep": ["sweep", "--param", "batch", "--no-onednn", "--json", "s.json", "--csv", "s.csv"],
    "--mode train": ["run", "--mode", "train", "--steps", "3", *OUTPUTS],
    "--data": ["run", "--data", "{data}", "--epochs", "1", *OUTPUTS],
}
INFERENCE = ("run", "run --json -", "run --csv -")
PROBE = "the forward (input 1×8 float32)"


def _each(commands: tuple[str, ...], phase: str) -> dict[str, str]:
    return dict.fromkeys(commands, phase)


#: Phase → (the model's arguments, flags, the phase each command that reaches it names).
#: A sweep's `--batch N` is its points 2 and N; without it, points 1 and 2.
PHASES: dict[str, tuple[list[str], list[str], dict[str, str]]] = {
    "probe": (["when=call", "n=1"], [], _each(tuple(COMMANDS), PROBE)),
    "batch 16": (
        ["when=batch"],
        ["--batch", "16"],
        {**_each(INFERENCE, "the first (cold) calls"), "sweep": "sweep point batch 16"},
    ),
    "13th call": (
        ["when=call", "n=13"],
        [],
        {**_each(INFERENCE, "timing the forwards"), "sweep": "sweep point batch 1"},
    ),
    "recording": (
        ["when=recording"],
        [],
        _each((*INFERENCE, "--data"), "capturing each layer's dtypes"),
    ),
    "tracing": (["when=tracing"], [], _each((*INFERENCE, "--data"), "tracing the aten ops")),
    "implicit route": (
        ["when=implicit"],
        ["--routes", "eager,implicit"],
        {**_each((*INFERENCE, "--data"), "the implicit route"), "sweep": "sweep point batch 1"},
    ),
    "pre-cast placement": (
        ["when=pre_cast"],
        ["--placements"],
        _each((*INFERENCE, "--data"), "measuring the placements"),
    ),
    "first training step": (
        ["when=training"],
        [],
        {"--mode train": "probing one training step", "--data": "training in float32 on the data"},
    ),
    "backward": (
        ["when=backward"],
        [],
        {"--mode train": "probing one training step", "--data": "training in float32 on the data"},
    ),
    "later training step": (["when=later_training"], [], {"--mode train": "training"}),
    "timed training steps": (
        ["when=training_timed", "n=3"],
        [],
        {"--mode train": "timing training steps"},
    ),
    "held-out rows": (
        ["when=held_out"],
        [],
        {"--mode train": "scoring the held-out rows", "--data": "training in float32 on the data"},
    ),
    "checkpoint's rows": (
        ["when=eval_batch"],
        ["--checkpoint", "{checkpoint}"],
        # The guards run nothing at the run's batch: the run meets it answering the rows.
        {"--data": "answering the held-out rows"},
    ),
}
CASES = [
    pytest.param(phase, command, kind, id=f"{phase}-{command}-{kind}")
    for phase, (_args, _flags, named) in PHASES.items()
    for command in named
    for kind in MARKERS
]


def test_the_matrix_holds_every_way_in_every_reachable_phase():
    assert len(CASES) == 40 * len(MARKERS) == 320


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    """The factory file, its data and checkpoint: read by every case, written by none."""
    return write_files(tmp_path_factory.mktemp("faulty"))


def _argv(phase: str, command: str, kind: str, inputs: dict[str, Path]) -> list[str]:
    model_args, flags, _named = PHASES[phase]
    name, *rest = COMMANDS[command]
    argv = [name, "--model", f"{inputs['model']}:build", *FAST]
    for arg in [*model_args, f"kind={kind}"]:
        argv += ["--model-arg", arg]
    if name == "sweep":
        batch = flags[flags.index("--batch") + 1] if "--batch" in flags else ""
        flags = [f for f in flags if f not in ("--batch", batch)]
        rest += ["--values", f"2,{batch}" if batch else "1,2"]
    elif "--batch" not in flags:
        rest += ["--batch", "2"]
    return argv + [a.format(**inputs) for a in [*rest, *flags]]


def _finished_points(phase_named: str) -> list[str]:
    """The sweep rows stdout may hold: the points before the failing one."""
    failing = phase_named.removeprefix("sweep point batch ")
    return {"16": ["2"]}.get(failing, [])


@pytest.mark.parametrize(("phase", "command", "kind"), CASES)
def test_the_users_code_failing_anywhere_is_one_line_and_leaves_no_file(
    phase, command, kind, inputs, tmp_path, capsys, monkeypatch
):
    work, fallback = tmp_path / "work", tmp_path / "fallback"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv(FALLBACK_DIR_ENV, str(fallback))
    before = snapshot(inputs["model"].parent)
    spec = f"{inputs['model']}:build"
    when = PHASES[phase][0][0].removeprefix("when=")

    assert main(_argv(phase, command, kind, inputs)) == 2

    out, err = capsys.readouterr()
    named = PHASES[phase][2][command]
    words = ERRORS[kind].format(words=f"fails at {when}")
    frame = f"faults.py:{line_of(MARKERS[kind])}"
    *printed, line = err.splitlines()
    assert line == f"error: model: {spec}: {named}: {frame}: {words}"
    # The user's prints only, before the line, one per failing call: the time guard's estimate
    # and the implicit route's kernel query call the forward too, and go on when it fails.
    assert printed == [f"USER-PRINT fails at {when}"] * len(printed)
    assert bool(printed) == (kind == "print_raise")
    if command == "sweep":
        rows = out.splitlines()[2:]
        assert [row.split()[0] for row in rows] == _finished_points(named), out
    else:
        assert out == ""
    left = [p for p in work.rglob("*") if not p.is_dir() or p.name != "moved"]
    assert left == []  # no output, no temporary file, wherever the user's code moved to
    assert (work / "moved").is_dir() == (kind == "chdir_raise")
    assert not fallback.exists()
    assert snapshot(inputs["model"].parent) == before

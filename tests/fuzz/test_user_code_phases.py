"""The user's code failing in any phase of the work, not only the first probe: every case ends
with one `error:` line naming the spec, the phase and the user's frame, exit code 2 (or the
training refusal), nothing on stdout, and no output file written, not even in part.

One factory file (faulty_models.py), written to tmp_path, builds a small model that fails when
it sees a given phase (a model argument says which): training mode, a batch of 16, its 13th
call, its layers being recorded or traced, oneDNN's bf16 maths (the implicit route), its
weights converted to bfloat16 (the pre-cast placement), training steps past the trained ones,
the held-out rows. It raises an Exception, a BaseException subclass of its own or
GeneratorExit, as asked. Each case runs the CLI in-process on tiny sizes; every phase crossed
with every way of failing and every command is test_user_code_matrix.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autocast_explorer.cli import main
from tests.fuzz.conftest import snapshot
from tests.fuzz.faulty_models import FACTORIES, line_of, write_files

FAST = ["--min-time", "0.01", "--threads", "1"]
RAISE = "the user's raise"


#: (id, arguments after the command and spec, the phase named, the frame's marker, the error).
#: "{data}" and "{checkpoint}" are files written beside the factories.
CASES: list[tuple[str, list[str], str, str, str]] = [
    (
        "raises only in training",
        ["run", "when=training", "--mode", "train", "--steps", "2"],
        "probing one training step",
        RAISE,
        "RuntimeError: fails at training",
    ),
    (
        "raises only from its second training step",
        ["run", "when=later_training", "--mode", "train", "--steps", "3"],
        "training",
        RAISE,
        "RuntimeError: fails at later_training",
    ),
    (
        "raises only in the timed training steps",
        ["run", "when=training_timed", "n=2", "--mode", "train", "--steps", "2"],
        "timing training steps",
        RAISE,
        "RuntimeError: fails at training_timed",
    ),
    (
        "raises only on the held-out rows after training",
        ["run", "when=held_out", "--mode", "train", "--steps", "2"],
        "scoring the held-out rows",
        RAISE,
        "RuntimeError: fails at held_out",
    ),
    (
        "raises only in training on the data",
        ["run", "when=training", "--data", "{data}", "--epochs", "1"],
        "training in float32 on the data",
        RAISE,
        "RuntimeError: fails at training",
    ),
    (
        "raises only in training mode on the data",
        ["run", "when=training", "--data", "{data}", "--mode", "train", "--epochs", "1"],
        "probing one training step",
        RAISE,
        "RuntimeError: fails at training",
    ),
    (
        "raises only answering the held-out rows of a checkpoint",
        [
            "run",
            "when=eval_batch",
            "--data",
            "{data}",
            "--checkpoint",
            "{checkpoint}",
            "--batch",
            "1",
        ],
        "answering the held-out rows",
        RAISE,
        "RuntimeError: fails at eval_batch",
    ),
    (
        "raises only at batch 16",
        ["run", "when=batch", "--batch", "16"],
        "the first (cold) calls",
        RAISE,
        "RuntimeError: fails at batch",
    ),
    (
        "raises only at batch 16, a sweep point",
        ["sweep", "when=batch", "--param", "batch", "--values", "2,16"],
        "sweep point batch 16",
        RAISE,
        "RuntimeError: fails at batch",
    ),
    (
        "raises on its 13th call",
        ["run", "when=call", "n=13"],
        "timing the forwards",
        RAISE,
        "RuntimeError: fails at call",
    ),
    (
        "raises while its layers are recorded",
        ["run", "when=recording"],
        "capturing each layer's dtypes",
        RAISE,
        "RuntimeError: fails at recording",
    ),
    (
        "raises while its ops are traced",
        ["run", "when=tracing"],
        "tracing the aten ops",
        RAISE,
        "RuntimeError: fails at tracing",
    ),
    (
        "raises on oneDNN's bf16 maths",
        ["run", "when=implicit", "--routes", "eager,implicit"],
        "the implicit route",
        RAISE,
        "RuntimeError: fails at implicit",
    ),
    (
        "raises only once converted to bfloat16 (pre-cast placement)",
        ["run", "when=pre_cast", "--placements"],
        "measuring the placements",
        RAISE,
        "RuntimeError: fails at pre_cast",
    ),
    (
        "raises a BaseException subclass on its 13th call",
        ["run", "when=call", "n=13", "kind=boom"],
        "timing the forwards",
        RAISE,
        "Boom: fails at call",
    ),
    (
        "raises GeneratorExit only in training",
        ["run", "when=training", "kind=generator_exit", "--mode", "train", "--steps", "2"],
        "probing one training step",
        RAISE,
        "GeneratorExit: fails at training",
    ),
    (
        "raises a BaseException subclass in a sweep point",
        ["sweep", "when=batch", "kind=boom", "--param", "batch", "--values", "4,16"],
        "sweep point batch 16",
        RAISE,
        "Boom: fails at batch",
    ),
    (
        "a factory raising a BaseException subclass",
        ["run:raises_boom"],
        "calling raises_boom",
        'raise Boom("factory boom")',
        "Boom: factory boom",
    ),
    (
        "a factory raising GeneratorExit",
        ["run:raises_generator_exit"],
        "calling raises_generator_exit",
        'raise GeneratorExit("factory closing")',
        "GeneratorExit: factory closing",
    ),
    (
        "BatchNorm at --batch 1 in training on the data",
        ["run:normalised", "--data", "{data}", "--epochs", "1", "--batch", "1"],
        "training in float32 on the data",
        "",
        "ValueError: Expected more than 1 value per channel when training",
    ),
]

#: The training refusal (docs/models.md): one line on field "mode", exit 2, before any step.
REFUSALS: list[tuple[str, list[str], str]] = [
    (
        "no parameters",
        ["run:no_parameters", "--mode", "train", "--steps", "2"],
        "mode: training needs a parameter that requires a gradient; {spec} has none",
    ),
    (
        "no parameters, on the data",
        ["run:no_parameters", "--data", "{data}", "--epochs", "1"],
        "model: training needs a parameter that requires a gradient; {spec} has none",
    ),
    (
        "a scalar output",
        ["run:scalar", "--mode", "train", "--steps", "2"],
        "mode: training needs one output row per input row; {spec} outputs a 0-dimensional "
        "tensor for a batch of 1",
    ),
]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """The factory file, a data file of ROWS rows (8 features, 4 classes), a checkpoint of
    the factory's model, and an empty folder the outputs are asked into."""
    folder = tmp_path / "in"
    folder.mkdir()
    (tmp_path / "out").mkdir()
    return {**write_files(folder), "out": tmp_path / "out"}


def _argv(args: list[str], files: dict[str, Path]) -> tuple[list[str], str]:
    """The command line of a case (its model arguments as --model-arg, batch 2 unless it says,
    every output asked for in files["out"]) and its spec."""
    command, _, factory = args[0].partition(":")
    spec = f"{files['model']}:{factory or 'build'}"
    argv = [command, "--model", spec, *FAST]
    for arg in args[1:]:
        if "=" in arg and not arg.startswith("-"):
            argv += ["--model-arg", arg]
        else:
            argv.append(arg.format(data=files["data"], checkpoint=files["checkpoint"]))
    if "--batch" not in argv and "--param" not in argv:
        argv += ["--batch", "2"]
    out = files["out"]
    argv += ["--json", str(out / "r.json"), "--csv", str(out / "r.csv")]
    argv += ["--report", str(out / "report")] if command == "run" else ["--no-onednn"]
    return argv, spec


def _oneline_of(capsys: pytest.CaptureFixture[str], command: str) -> str:
    """The one error line; stdout empty (a sweep streams the rows of the points it finished,
    never a row of the failing point)."""
    out, err = capsys.readouterr()
    if command == "run":
        assert out == ""
    assert "error" not in out and " 16 " not in out
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "Traceback" not in err
    return err.rstrip("\n")


@pytest.mark.parametrize(
    ("args", "phase", "marker", "error"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_the_users_code_failing_in_any_phase_is_oneline_of(
    args, phase, marker, error, files, capsys, monkeypatch
):
    monkeypatch.chdir(files["out"].parent)
    argv, spec = _argv(args, files)
    before = snapshot(files["out"].parent)
    assert main(argv) == 2
    line = _oneline_of(capsys, argv[0])
    frame = f"faults.py:{line_of(marker)}: " if marker else ""
    assert line.startswith(f"error: model: {spec}: {phase}: {frame}{error}"), line
    assert snapshot(files["out"].parent) == before  # no output, not even in part


@pytest.mark.parametrize(("args", "expected"), [pytest.param(*c[1:], id=c[0]) for c in REFUSALS])
def test_a_model_training_cannot_take_is_the_training_refusal(
    args, expected, files, capsys, monkeypatch
):
    monkeypatch.chdir(files["out"].parent)
    argv, spec = _argv(args, files)
    before = snapshot(files["out"].parent)
    assert main(argv) == 2
    assert _oneline_of(capsys, argv[0]) == f"error: {expected.format(spec=spec)}"
    assert snapshot(files["out"].parent) == before


@pytest.mark.parametrize(
    ("raised", "named"),
    [
        ("Boom('at import')", "Boom: at import"),
        ("GeneratorExit('at import')", "GeneratorExit: at import"),
        ("ZeroDivisionError('at import')", "ZeroDivisionError: at import"),
    ],
)
def test_a_module_failing_at_import_is_oneline_of(raised, named, files, capsys):
    path = files["model"].with_name("at_import.py")
    path.write_text(f"class Boom(BaseException):\n    pass\n\n\nraise {raised}\n")
    spec = f"{path}:build"
    before = snapshot(files["out"].parent)
    out = files["out"]
    argv = ["run", "--model", spec, *FAST, "--json", str(out / "r.json")]
    assert main(argv) == 2
    assert (
        _oneline_of(capsys, "run") == f"error: model: {spec}: importing it: at_import.py:5: {named}"
    )
    assert snapshot(files["out"].parent) == before


@pytest.mark.parametrize("mode", ["infer", "train"])
def test_a_last_batch_of_one_row_joins_the_batch_before_it(mode, files):
    """31 training rows in batches of 6: the sixth batch would hold one row, which BatchNorm
    refuses in training; it joins the fifth, so every row is still trained on each epoch."""
    args = ["run:normalised", "--data", "{data}", "--epochs", "2", "--batch", "6", "--mode", mode]
    argv, _spec = _argv(args, files)
    assert main(argv) == 0
    document = json.loads((files["out"] / "r.json").read_text())
    data = document["data"]
    assert (data["n_train"], data["n_test"], data["epochs"]) == (31, 10, 2)
    if mode == "train":  # five batches an epoch: 6, 6, 6, 6 and 7 rows
        assert document["train"]["steps"] == 2 * 5
        assert [e["step"] for e in document["train"]["epochs"]] == [5, 10]
    else:
        assert len(data["history"]) == 2


@pytest.mark.process
@pytest.mark.slow
def test_reproduce_py_names_the_users_frame_in_oneline_of(files, tmp_path):
    """The report's reproduce.py rebuilds the model through the explorer's loader: when the
    model's code now fails, the script ends as the explorer would (one line, exit 2)."""
    spec = f"{files['model']}:build"
    report = tmp_path / "report"
    assert main(["run", "--model", spec, *FAST, "--batch", "2", "--report", str(report)]) == 0
    files["model"].write_text(FACTORIES.replace('build(when="never"', 'build(when="eval_batch"'))
    script = [sys.executable, str(report / "reproduce.py"), "--min-time", "0.01"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(script, capture_output=True, text=True, timeout=120, env=env, check=False)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(
        f"error: model: {spec}: reproduce.py: faults.py:{line_of(RAISE)}: RuntimeError: fails at"
    )

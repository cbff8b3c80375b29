"""`autocast-explorer ops` and the issue-6 lines of `run`."""

import json

import pytest

from autocast_explorer.cli import main
from autocast_explorer.core.numerics.oppolicy import PROBED_OPS


def test_ops_prints_a_readable_table(capsys):
    assert main(["ops"]) == 0
    out = capsys.readouterr().out
    assert out.startswith('Op policy under torch.autocast("cpu", dtype=torch.bfloat16)')
    table = out.split("\n\n")[1]  # header, table, policy groups, errors, notes
    rows = {line.split()[0]: line.split()[1:] for line in table.splitlines()}
    assert len(rows) == 1 + len(PROBED_OPS)  # the column header and one row per op
    assert rows["linear"] == ["lower", "bfloat16", "bfloat16", "bfloat16", "bfloat16"]
    assert rows["relu"] == ["follows", "float32", "bfloat16", "-", "-"]
    assert rows["cat"] == ["promote", "float32", "bfloat16", "float32", "float32"]
    assert rows["mse_loss"] == ["fp32", "float32", "float32", "float32", "float32"]
    assert rows["layer_norm"] == ["follows", "float32", "bfloat16", "bfloat16", "error"]
    assert "  layer_norm with first input float32, others low: RuntimeError: mixed dtype" in out
    assert "Where this CPU contradicts common belief:" in out
    assert "    softmax, mean — holds only for float32 inputs: given bfloat16 input" in out


def test_ops_json_to_stdout_holds_only_the_document(capsys):
    assert main(["ops", "--dtype", "float16", "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == "autocast-explorer/ops/1"
    assert data["dtype"] == "float16"
    policies = {op["name"]: op["policy"] for op in data["ops"]}
    assert (policies["linear"], policies["softmax"]) == ("lower", "follows")
    assert data["ops"][0]["cases"]["float32"]["out"] == "float16"


def test_ops_json_file_and_table(tmp_path, capsys):
    target = tmp_path / "ops.json"
    assert main(["ops", "--json", str(target), "--threads", "1"]) == 0
    assert json.loads(target.read_text())["environment"]["threads"] == 1
    assert "lower   (runs in the autocast dtype): linear" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dtype", "float64"], "error: argument --dtype: invalid choice: 'float64'"),
        (["--threads", "0"], "error: threads: must be an integer in 1 … "),
        (["--threads", "two"], "error: argument --threads: invalid int value"),
        (["--bogus"], "error: unrecognized arguments: --bogus"),
    ],
)
def test_ops_bad_input_exits_2_with_one_error_line(args, message, capsys):
    assert main(["ops", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message)
    assert err.count("\n") == 1


def test_ops_unwritable_output(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["ops", "--json", str(blocker / "ops.json")]) == 2
    assert capsys.readouterr().err.startswith("error: --json: cannot write")


def test_run_summary_shows_error_topk_and_casts(capsys):
    args = ["run", "--widths", "8,4,2", "--batch", "3", "--topk", "2", "--min-time", "0.02"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "top-2: float32 top-1 within autocast's top 2 on" in out
    assert "Error per layer (autocast output vs float32 output):" in out
    assert "  fc1    max|err|" in out
    assert (
        "Casts autocast inserted (one forward under no_grad): 5 (5× aten._to_copy.default), "
        "140 bytes written, 280 read"
    ) in out
    assert "under inference_mode the same forward's casts are seen as: 5× aten.to.dtype" in out


def test_run_flags_reach_the_result(capsys):
    args = [
        "run", "--widths", "16,8,4", "--batch", "4", "--min-time", "0.02", "--json", "-",
        "--input-scale", "1000", "--input-distribution", "uniform", "--rtol", "0.5", "--topk", "3",
    ]  # fmt: skip
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["config"]["input_scale"] == 1000
    assert data["config"]["input_distribution"] == "uniform"
    assert data["agreement"]["rtol"] == 0.5
    assert data["agreement"]["topk"]["k"] == 3

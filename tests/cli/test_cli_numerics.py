"""`autocast-explorer ops` and the numerics lines of `run`."""

import json

import pytest

from autocast_explorer.cli import main
from autocast_explorer.core.numerics.oppolicy import CATEGORIES, PROBED_OPS, probe_ops


def _table_rows(out: str) -> dict[str, list[str]]:
    """op → its cells, from the table part of `ops` output (header, table, counts, notes)."""
    table = out.split("\n\n")[1]
    return {
        line.split()[0]: line.split()[1:]
        for line in table.splitlines()[1:]
        if not line.startswith("-- ")
    }


def test_ops_prints_a_readable_table(capsys):
    assert main(["ops"]) == 0
    out = capsys.readouterr().out
    assert out.startswith('Op policy under torch.autocast("cpu", dtype=torch.bfloat16)')
    table = out.split("\n\n")[1]
    headers = [line for line in table.splitlines() if line.startswith("-- ")]
    assert (
        headers[0]
        == f"-- matmul & conv ({sum(s.category == 'matmul-conv' for s in PROBED_OPS)}) --"
    )
    assert [h.split(" (")[0][3:] for h in headers] == list(CATEGORIES.values())
    rows = _table_rows(out)
    assert len(rows) == len(PROBED_OPS)  # one row per op
    assert rows["linear"] == ["lower", "lower", "bfloat16", "bfloat16", "bfloat16", "bfloat16"]
    assert rows["relu"] == ["follows", "unlisted", "float32", "bfloat16", "-", "-"]
    assert rows["cat"] == ["promote", "promote", "float32", "bfloat16", "float32", "float32"]
    assert rows["mse_loss"] == ["fp32", "fp32", "float32", "float32", "float32", "float32"]
    assert rows["layer_norm"] == ["follows", "unlisted", "float32", "bfloat16", "bfloat16", "error"]
    assert rows["eq"] == [
        "promote", "promote", "bool[float32]", "bool[bfloat16]", "bool[float32]", "bool[float32]"
    ]  # fmt: skip
    assert "  layer_norm with first input float32, others low: RuntimeError: mixed dtype" in out
    assert "Where this CPU contradicts common belief:" in out
    assert "    softmax, mean — holds only for float32 inputs: given bfloat16 input" in out
    probe = probe_ops("bfloat16")
    disagreeing = [op.name for op in probe.disagreements()]
    assert all(rows[name][-1] == "!" for name in disagreeing)
    assert sum(cells[-1] == "!" for cells in rows.values()) == len(disagreeing)
    agree = len(probe.ops) - len(disagreeing)
    assert f"documented vs measured: {agree} agree, {len(disagreeing)} disagree" in out
    if disagreeing:
        assert "Where this torch on this CPU disagrees with what PyTorch documents:" in out
    for policy, count in probe.policy_counts().items():
        assert f"{policy:<8}(" in out and f"): {count}\n" in out
    assert "docs: PyTorch AMP docs, docs/source/amp.md" in out


def test_ops_json_to_stdout_holds_only_the_document(capsys):
    assert main(["ops", "--dtype", "float16", "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == "autocast-explorer/ops/1"
    assert data["dtype"] == "float16"
    policies = {op["name"]: op["policy"] for op in data["ops"]}
    assert (policies["linear"], policies["softmax"]) == ("lower", "follows")
    assert data["ops"][0]["cases"]["float32"]["out"] == "float16"
    assert data["ops"][0]["documented"]["policy"] == "lower"


def test_ops_json_file_and_table(tmp_path, capsys):
    target = tmp_path / "ops.json"
    assert main(["ops", "--json", str(target), "--threads", "1"]) == 0
    assert json.loads(target.read_text())["environment"]["threads"] == 1
    assert "lower   (runs in the autocast dtype): " in capsys.readouterr().out


def test_ops_only_a_category_or_named_ops(capsys):
    assert main(["ops", "--only", "losses"]) == 0
    rows = _table_rows(capsys.readouterr().out)
    assert set(rows) == {s.name for s in PROBED_OPS if s.category == "losses"}
    assert main(["ops", "--only", "comparisons,pooling & padding", "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    categories = {"comparisons", "pooling-padding"}
    assert [op["name"] for op in data["ops"]] == [
        s.name for s in PROBED_OPS if s.category in categories
    ]
    assert main(["ops", "--op", "lstm", "--op", "eq,cdist"]) == 0
    out = capsys.readouterr().out
    assert set(_table_rows(out)) == {"lstm", "eq", "cdist"}
    assert "-- attention & rnn (1) --" in out and "-- linalg (1) --" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--dtype", "float64"], "error: argument --dtype: invalid choice: 'float64'"),
        (["--threads", "0"], "error: threads: must be an integer in 1 … "),
        (["--threads", "two"], "error: argument --threads: invalid int value"),
        (["--bogus"], "error: unrecognized arguments: --bogus"),
        (["--only", "maths"], "error: only: unknown category 'maths' (choose from matmul-conv,"),
        (["--op", "relux"], "error: op: unknown op 'relux'"),
        (["--op", "conv"], "error: op: unknown op 'conv'; did you mean conv1d, conv2d"),
        (["--op", ","], "error: only/op: give a category or an op name"),
        (["--only"], "error: argument --only: expected one argument"),
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

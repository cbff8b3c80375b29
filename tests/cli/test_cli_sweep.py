import json
import math
import os
import signal
import subprocess
import sys
import time

import pytest

from autocast_explorer.cli import main
from autocast_explorer.core.sweeps.crossover import crossovers

FAST = ["--widths", "32,16,16,4", "--min-time", "0.02"]


def test_sweep_prints_a_table_crossover_and_verdict(capsys, timing_noise):
    timing_noise.clear(0.8)  # every point can tell, whatever the machine's load
    assert main(["sweep", "--values", "1,4,16", *FAST]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("Autocast Explorer sweep · batch over 3 values (widths 32,16,16,4)")
    header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("batch"))
    assert "float32 ms" in lines[header] and "speedup" in lines[header]
    rows = lines[header + 1 : header + 4]
    assert [int(r.split()[0]) for r in rows] == [1, 4, 16]
    assert all(r.rstrip().split()[5].endswith("×") for r in rows)
    assert any(line.startswith(("Crossover", "No crossover")) for line in lines)
    assert any(line.startswith("Verdict: ") for line in lines)
    assert any(line.startswith("oneDNN: ") for line in lines)
    assert " cores × " in out and "GFLOP/s (estimate)" in out


def test_sweep_json_to_stdout_is_only_the_document(capsys):
    assert main(["sweep", "--param", "width", "--values", "8,32", "--json", "-", *FAST]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == "autocast-explorer/sweep/1"
    assert data["param"] == "width"
    assert [p["widths"] for p in data["points"]] == [[32, 8, 8, 4], [32, 32, 32, 4]]
    # The crossover is the one the speedups of the points that could tell give (a point's
    # verdict says whether it could; null when they never cross 1.0).
    speedups = [
        p["latency"]["speedup"] if p["latency"]["verdict"]["direction"] else math.nan
        for p in data["points"]
    ]
    expected = crossovers(data["values"], speedups)
    assert data["crossover"] == (pytest.approx(expected) if expected else None)
    assert "native_bf16" in data["environment"]
    assert data["verdict"]["sentence"]


def test_grid_json_and_csv_files(tmp_path, capsys):
    j, c = tmp_path / "g.json", tmp_path / "g.csv"
    args = ["sweep", "--param", "batch,width", "--values", "1,4", "--width-values", "8,16"]
    assert main([*args, "--json", str(j), "--csv", str(c), "--no-onednn", *FAST]) == 0
    data = json.loads(j.read_text())
    assert data["param"] == "batch,width"
    assert data["width_values"] == [8, 16]
    assert [(p["value"], p["width"]) for p in data["points"]] == [(1, 8), (4, 8), (1, 16), (4, 16)]
    assert data["verdict"]["onednn"] is None
    assert len(c.read_text().splitlines()) == 5
    out = capsys.readouterr().out
    assert "Speedup (float32 / autocast; ?: could not tell): rows = hidden width" in out


def test_range_values(capsys):
    assert main(["sweep", "--values", "1:16:3", "--json", "-", "--no-onednn", *FAST]) == 0
    assert json.loads(capsys.readouterr().out)["values"] == [1, 4, 16]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--param", "depth"], "error: argument --param: invalid choice: 'depth'"),
        (["--values", "1,x"], "error: values: 'x' is not a whole number"),
        (["--values", "1:8"], "error: values: a range is LOW:HIGH:COUNT"),
        (["--values", "0,4"], "error: values: 0 must be a whole number ≥ 1"),
        (["--width-values", "8"], "error: --width-values is for a grid: use --param batch,width"),
        (
            ["--param", "width", "--values", "8", "--widths", "32,4"],
            "error: widths: width 8: a width sweep needs at least one hidden layer",
        ),
        (
            ["--param", "batch,width", "--values", "1", "--width-values", "a"],
            "error: width_values: 'a' is not a whole number",
        ),
        (
            ["--values", "1,10000000", "--widths", "4096,4096,10"],
            "error: memory: batch 10000000: this model needs about",
        ),
    ],
)
def test_bad_input_exits_2_with_one_error_line(args, message, capsys):
    assert main(["sweep", "--min-time", "0.02", *args]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(message)
    assert captured.err.count("\n") == 1
    assert "Traceback" not in captured.err
    assert captured.out == ""  # refused before the table's header


def test_run_placements_adds_the_section_and_prints_it(capsys):
    assert (
        main(
            [
                "run",
                "--widths",
                "32,16,4",
                "--batch",
                "8",
                "--placements",
                "--json",
                "-",
                "--min-time",
                "0.02",
            ]
        )
        == 0
    )
    data = json.loads(capsys.readouterr().out)
    placements = data["placements"]
    assert {k: placements[k]["casts_per_forward"] for k in ("per_call", "hoisted", "pre_cast")} == {
        "per_call": 5,
        "hoisted": 1,
        "pre_cast": 0,
    }
    assert placements["per_call"]["cast_bytes"] == 1704
    assert placements["hoisted"]["median_ms"] > 0
    assert (
        main(["run", "--widths", "32,16,4", "--batch", "8", "--placements", "--min-time", "0.02"])
        == 0
    )
    out = capsys.readouterr().out
    assert "Autocast placement (bfloat16; medians timed side by side, casts observed):" in out
    assert "5 casts per forward (1.7 KiB)" in out
    assert "Per-call autocast made 5 casts" in out


@pytest.mark.process
def test_ctrl_c_during_a_sweep_exits_130():
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "autocast_explorer",
            "sweep",
            "--values",
            "1,2,4",
            "--widths",
            "64,64,8",
            "--min-time",
            "120",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    time.sleep(4.0)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "Traceback" not in err
    assert "interrupted" in err


@pytest.mark.parametrize(
    ("args", "param", "values"),
    [
        (["--model", "transformer", "--param", "seq", "--values", "4,16", "--d-model", "16",
          "--heads", "2", "--depth", "1"], "seq", [4, 16]),
        (["--model", "cnn", "--param", "channels", "--values", "4,8", "--image", "8"],
         "channels", [4, 8]),
        (["--model", "cnn", "--param", "image", "--values", "4,8", "--channels", "3,4"],
         "image", [4, 8]),
        (["--model", "rnn", "--cell", "gru", "--param", "hidden", "--values", "8,16", "--seq",
          "4", "--depth", "1"], "hidden", [8, 16]),
        (["--model", "rnn", "--cell", "gru", "--param", "batch", "--values", "1,4", "--seq",
          "4"], "batch", [1, 4]),
    ],
)  # fmt: skip
def test_family_sweeps(args, param, values, capsys):
    assert main(["sweep", *args, "--min-time", "0.02", "--no-onednn", "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["param"] == param and data["values"] == values
    assert [p["value"] for p in data["points"]] == values
    assert all(p["flops"] > 0 and p["latency"]["speedup"] > 0 for p in data["points"])
    assert data["points"][0]["flops"] < data["points"][1]["flops"]
    assert "crossover" in data and data["verdict"]["sentence"]
    from autocast_explorer.core.sweeps.result import SweepResult

    back = SweepResult.from_dict(data)
    assert back.config.model == data["config"]["model"]
    assert [p.flops for p in back.points] == [p["flops"] for p in data["points"]]


def _bf16_lstm_error() -> str:
    """What torch itself says when a bfloat16-autocast LSTM runs on this CPU ('' if it runs)."""
    import torch

    lstm = torch.nn.LSTM(8, 8, batch_first=True)
    try:
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
            lstm(torch.randn(2, 4, 8))
    except RuntimeError as exc:
        return str(exc).splitlines()[0]
    return ""


def test_an_lstm_sweep_follows_what_this_cpu_does(capsys):
    """Where oneDNN has no bfloat16 LSTM (AVX2-only hosts) a sweep has nothing to compare and
    says so in one line; where it has one, the sweep measures both modes."""
    args = ["sweep", "--model", "rnn", "--cell", "lstm", "--param", "hidden", "--values", "8,16"]
    code = main([*args, "--seq", "4", "--depth", "1", "--min-time", "0.02", "--no-onednn"])
    out, err = capsys.readouterr()
    problem = _bf16_lstm_error()
    if problem:
        assert code == 2
        assert err.count("\n") == 1 and err.startswith("error: autocast: hidden 8: ")
        assert problem[:40] in err and "`run` shows this finding" in err
    else:
        assert code == 0 and err == ""
        rows = out.splitlines()[2:4]  # after the title and the table's header
        assert [row.split()[0] for row in rows] == ["8", "16"]
        assert "crossover" in out.lower()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "cnn", "--param", "seq"], "error: param: seq does not apply to --model cnn"),
        (["--model", "rnn", "--param", "width"], "error: param: width does not apply"),
        (["--model", "cnn", "--param", "batch,width"], "error: param: a batch × width grid"),
        (["--model", "transformer", "--param", "d_model", "--values", "64,66"], "error: heads:"),
    ],
)
def test_family_sweep_bad_input(args, message, capsys):
    assert main(["sweep", *args, "--min-time", "0.02"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message), err
    assert err.count("\n") == 1

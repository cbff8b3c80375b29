import json
import os
import signal
import subprocess
import sys
import time

import pytest

from autocast_explorer.cli import main

FAST = ["--min-time", "0.02"]


def test_run_prints_a_readable_summary(capsys):
    assert main(["run", "--widths", "32,16,4", "--batch", "8", *FAST]) == 0
    out = capsys.readouterr().out
    assert "plain    float32" in out
    assert "autocast bfloat16" in out
    assert "fc1    Linear      plain float32→float32    autocast float32→bfloat16" in out
    assert "predictions agree on" in out
    # A busy machine may not be able to tell: then the verdict says so, with no figure.
    assert (
        "Verdict: autocast" in out
        or "Verdict: too noisy to tell" in out
        or ("Verdict: can't tell" in out)
    )
    assert "  interval " in out or "no interval" in out or "Verdict: too noisy" in out
    # The time guard's forecast is printed beside the measurement, with what it timed.
    assert "  time guard estimated " in out and "ms (" in out
    assert "    (basis: nn.Linear at 8×32→16, 8×16→16 timed in float32 and under bfloat16" in out


def test_json_to_stdout_holds_only_the_document(capsys):
    assert main(["run", "--widths", "32,16,4", "--batch", "8", "--json", "-", *FAST]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == "autocast-explorer/result/1"
    assert data["config"]["widths"] == [32, 16, 4]
    assert data["output_dtype"]["autocast"] == "bfloat16"


def test_json_and_csv_files(tmp_path, capsys):
    j, c = tmp_path / "r.json", tmp_path / "r.csv"
    assert (
        main(
            [
                "run",
                "--widths",
                "16,4",
                "--batch",
                "2",
                "--dtype",
                "float16",
                "--json",
                str(j),
                "--csv",
                str(c),
                *FAST,
            ]
        )
        == 0
    )
    data = json.loads(j.read_text())
    assert data["config"]["dtype"] == "float16"
    assert c.read_text().splitlines()[2].startswith("autocast,float16,")
    assert "Verdict" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--widths", "256,abc"], "error: argument --widths: 'abc' is not a whole number"),
        (["--widths", "256"], "error: widths: needs at least 2 entries"),
        (["--batch", "0"], "error: batch: must be an integer ≥ 1"),
        (["--batch", "many"], "error: argument --batch: invalid int value"),
        (["--dtype", "float64"], "error: argument --dtype: invalid choice"),
        (["--threads", "0"], "error: threads: must be an integer in 1 … "),
        (["--atol", "-1"], "error: atol: must be a number in 0 … "),
        (["--widths", "100000,100000,10", "--batch", "100000"], "error: memory:"),
        (["--nonsense"], "error: unrecognized arguments: --nonsense"),
        (
            ["--model", "resnet"],
            "error: --model 'resnet': not a family (mlp, cnn, transformer, rnn)",
        ),
        (["--model", "transformer", "--heads", "5"], "error: heads: d_model 64 is not divisible"),
        (["--model", "cnn", "--widths", "8,4"], "error: --widths belongs to --model mlp, not cnn"),
        (["--model", "mlp", "--seq", "8"], "error: --seq belongs to --model transformer, rnn"),
        (["--model", "cnn", "--no-fast-path"], "error: --no-fast-path belongs to --model trans"),
        (["--model", "rnn", "--activation", "gelu"], "error: --activation belongs to --model"),
        (["--model", "cnn", "--channels", "3"], "error: channels: needs the input channels and"),
        (["--model", "cnn", "--channels", "3,8,8,8", "--image", "4"], "error: image: 4 px is"),
        (["--model", "rnn", "--cell", "rnn"], "error: argument --cell: invalid choice: 'rnn'"),
        (
            ["--model", "transformer", "--seq", "100000", "--batch", "4096"],
            "error: memory:",
        ),
    ],
)
def test_bad_input_exits_2_with_one_error_line(args, message, capsys):
    assert main(["run", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message)
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_unwritable_output_is_a_clear_error(tmp_path, capsys):
    target = tmp_path / "file"
    target.write_text("x")
    assert (
        main(["run", "--widths", "4,2", "--batch", "1", "--json", str(target / "sub.json"), *FAST])
        == 2
    )
    assert capsys.readouterr().err.startswith("error: --json: cannot write")


@pytest.mark.process
def test_ctrl_c_exits_130_without_traceback():
    proc = subprocess.Popen(
        [sys.executable, "-m", "autocast_explorer", "run", "--widths", "64,64", "--min-time", "60"],
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
    ("args", "line"),
    [
        (
            ["--model", "cnn", "--channels", "3,8", "--image", "8"],
            "conv1    Conv2d            plain float32→float32    autocast float32→bfloat16",
        ),
        (
            ["--model", "transformer", "--d-model", "16", "--heads", "2", "--seq", "4",
             "--depth", "1", "--ff", "32"],
            "transformer path: the fused encoder kernel (fast path: eval + no_grad) ran",
        ),
        (
            ["--model", "rnn", "--cell", "gru", "--seq", "4", "--depth", "1"],
            "gru   GRU         plain float32→float32    autocast float32→float32",
        ),
    ],
)  # fmt: skip
def test_every_family_runs_from_the_command_line(args, line, capsys):
    assert main(["run", *args, "--batch", "2", *FAST]) == 0
    out = capsys.readouterr().out
    assert line in out
    # A busy machine may not be able to tell: then the verdict says so, with no figure.
    assert (
        "Verdict: autocast" in out
        or "Verdict: too noisy to tell" in out
        or ("Verdict: can't tell" in out)
    )
    assert "  interval " in out or "no interval" in out or "Verdict: too noisy" in out


def test_family_json_names_the_model_and_its_parameters(capsys):
    args = ["run", "--model", "transformer", "--d-model", "16", "--heads", "2", "--seq", "4"]
    assert (
        main([*args, "--depth", "1", "--no-fast-path", "--batch", "2", "--json", "-", *FAST]) == 0
    )
    data = json.loads(capsys.readouterr().out)
    config = data["config"]
    assert config["model"] == "transformer" and "widths" not in config
    assert (config["d_model"], config["heads"], config["seq"], config["depth"]) == (16, 2, 4, 1)
    assert config["fast_path"] is False
    kinds = {layer["kind"] for layer in data["layers"]}
    assert {"TransformerEncoderLayer", "MultiheadAttention", "LayerNorm", "Linear"} <= kinds

"""`run --mode train`: the training flags, their bad values, and the train object in the JSON."""

import json

import pytest

from autocast_explorer.cli import main

SMALL = ["--widths", "32,64,4", "--batch", "16", "--threads", "1", "--min-time", "0.02"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mode", "fly"], "error: mode: must be one of infer, train (got 'fly')"),
        (["--steps", "0"], "error: steps: must be a whole number in 1 … 100,000"),
        (["--steps", "-5"], "error: steps: must be a whole number in 1 … 100,000"),
        (["--steps", "100000000"], "error: steps: must be a whole number in 1 … 100,000"),
        (["--steps", "ten"], "error: argument --steps: must be a whole number (got 'ten')"),
        (["--lr", "0"], "error: lr: must be a finite number > 0"),
        (["--lr", "-0.1"], "error: lr: must be a finite number > 0"),
        (["--lr", "nan"], "error: lr: must be a finite number > 0"),
        (["--lr", "inf"], "error: lr: must be a finite number > 0"),
        (["--lr", "fast"], "error: argument --lr: must be a number (got 'fast')"),
        (["--optimizer", "adam"], "error: optimizer: must be one of sgd, adamw (got 'adam')"),
        (["--mode", "train", "--placements"], "error: --placements times forwards"),
    ],
)
def test_bad_training_input_exits_2_with_one_line_naming_the_flag(args, message, capsys):
    assert main(["run", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message)
    assert err.count("\n") == 1


def test_train_json_records_the_training_config_and_measurements(capsys):
    args = ["run", *SMALL, "--mode", "train", "--steps", "12", "--optimizer", "adamw"]
    assert main([*args, "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    config = data["config"]
    assert (config["mode"], config["steps"], config["optimizer"]) == ("train", 12, "adamw")
    assert config["lr"] == 0.001  # AdamW's default step
    train = data["train"]
    assert len(train["loss"]["plain"]) == len(train["loss"]["autocast"]) == 12
    assert train["loss_dtype"] == {"plain": "float32", "autocast": "float32"}
    assert set(train["grad_dtypes"].values()) == {"float32"}
    assert train["saved_bytes"]["autocast"] < train["saved_bytes"]["plain"]
    assert data["latency"]["plain"]["median_ms"] > 0


def test_train_summary_and_no_scaler_for_float16(capsys):
    args = ["run", *SMALL, "--mode", "train", "--steps", "3", "--dtype", "float16"]
    assert main([*args, "--no-scaler"]) == 0
    out = capsys.readouterr().out
    assert "Time per training step" in out
    assert "GradScaler: not used (--no-scaler)" in out
    assert main(args) == 0
    assert "GradScaler: enabled True, scale 65536 →" in capsys.readouterr().out

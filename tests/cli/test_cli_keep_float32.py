"""`--keep-float32 PATTERN` (repeatable) on run and sweep; a pattern that names no layer is one
`error: keep_float32: …` line and exit 2, before anything is measured."""

import json

import pytest

from autocast_explorer.cli import main

TINY = ["--widths", "32,16,16,4", "--batch", "8", "--min-time", "0.02"]


def test_run_keeps_every_layer_its_patterns_name(capsys):
    args = ["run", *TINY, "--keep-float32", "fc2", "--keep-float32", "ReLU", "--json", "-"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["config"]["keep_float32"] == ["fc2", "ReLU"]
    kept = {layer["name"]: layer["kept_float32"] for layer in data["layers"]}
    assert kept == {"fc1": False, "relu1": True, "fc2": True, "relu2": True, "fc3": False}
    fc2 = next(layer for layer in data["layers"] if layer["name"] == "fc2")
    assert fc2["autocast"]["compute_dtypes"] == {"aten.addmm.default": {"float32": 1}}
    fc3 = next(layer for layer in data["layers"] if layer["name"] == "fc3")
    assert fc3["autocast"]["compute_dtypes"] == {"aten.addmm.default": {"bfloat16": 1}}


def test_training_mode_keeps_them_too(capsys):
    args = ["run", *TINY, "--mode", "train", "--steps", "2", "--keep-float32", "fc*", "--json", "-"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    forward = {t["name"]: t["forward"]["autocast"] for t in data["train"]["layers"]}
    assert forward["fc1"] == forward["fc3"] == {"in": "float32", "out": "float32"}
    assert forward["relu1"] == {"in": "float32", "out": "float32"}  # after a kept layer
    assert [layer["kept_float32"] for layer in data["layers"]] == [True, False, True, False, True]


def test_the_summary_names_the_kept_layers(capsys):
    assert main(["run", *TINY, "--keep-float32", "fc2"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith("· kept in float32: fc2")
    assert "autocast bfloat16→float32 (kept in float32)" in out


@pytest.mark.parametrize(
    ("command", "extra", "message"),
    [
        ("run", [], "error: keep_float32: 'fc9' matches no layer; nearest: fc3, fc2, fc1"),
        ("run", ["--mode", "train"], "error: keep_float32: 'fc9' matches no layer"),
        (
            "sweep",
            ["--values", "2,4", "--no-onednn"],
            "error: keep_float32: batch 2: 'fc9' matches no layer; nearest: fc3, fc2, fc1",
        ),
    ],
    ids=["run", "train", "sweep"],
)
def test_a_pattern_that_names_no_layer_exits_2_with_one_line(command, extra, message, capsys):
    assert main([command, *TINY, *extra, "--keep-float32", "fc9"]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(message)
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.out == ""  # nothing measured, not even the sweep's header


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("fc1,fc2", "error: keep_float32: each pattern is one module path glob or class name"),
        ("", "error: keep_float32: each pattern must be non-empty text"),
    ],
)
def test_a_malformed_pattern_exits_2_naming_the_field(pattern, message, capsys):
    assert main(["run", *TINY, "--keep-float32", pattern]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_placements_refuse_a_keep_set(capsys):
    assert main(["run", *TINY, "--placements", "--keep-float32", "fc2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --placements places autocast around the whole model")


def test_a_sweep_keeps_the_layer_at_every_point(capsys):
    args = ["sweep", *TINY, "--values", "2,4", "--no-onednn", "--keep-float32", "fc2"]
    assert main([*args, "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["config"]["keep_float32"] == ["fc2"]
    assert len(data["points"]) == 2


def test_help_lists_the_flag():
    from autocast_explorer.cli import build_parser

    for command in ("run", "sweep"):
        text = build_parser()._subparsers._group_actions[0].choices[command].format_help()
        assert "--keep-float32 PATTERN" in text

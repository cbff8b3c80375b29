"""`run --preset` and `sweep --preset`: a preset is the starting point, typed flags win."""

import argparse
import dataclasses
import json

import pytest

from autocast_explorer.cli import build_parser, main
from autocast_explorer.cli.common import config_from_args
from autocast_explorer.core.experiment.config import TRAINING_FIELDS, ExperimentConfig
from autocast_explorer.core.learning.presets import builtin_presets, find_preset

FAST = ["--min-time", "0.02"]


def _preset(key: str):
    return find_preset(builtin_presets(), key)


def test_without_flags_the_config_is_the_default_and_flags_are_told_apart_from_defaults():
    args = build_parser().parse_args(["run"])
    assert config_from_args(args) == ExperimentConfig()
    base = _preset("softmax-head").config
    args = build_parser().parse_args(["run", "--batch", "128", "--seed", "0"])
    # --batch 128 and --seed 0 equal the defaults, yet they were typed, so they are applied.
    assert config_from_args(args, base.replace(batch=7, seed=3)) == base


def test_run_preset_by_name_uses_its_config(capsys):
    assert main(["run", "--preset", "tutorial", "--json", "-", *FAST]) == 0
    data = json.loads(capsys.readouterr().out)
    tutorial = _preset("tutorial").config
    assert data["config"] == tutorial.replace(min_time=0.02).to_dict()
    assert data["config"]["widths"] == [256, 256, 256, 10]
    assert data["config"]["batch"] == 128
    assert data["output_dtype"]["autocast"] == "bfloat16"


def test_explicit_flags_override_the_preset(capsys):
    args = ["--preset", "float16", "--widths", "32,16,4", "--batch", "8", "--seed", "5"]
    assert main(["run", *args, "--json", "-", *FAST]) == 0
    config = json.loads(capsys.readouterr().out)["config"]
    assert config["dtype"] == "float16"  # from the preset
    assert (config["widths"], config["batch"], config["seed"]) == ([32, 16, 4], 8, 5)


def test_run_preset_from_a_file_and_a_note_about_its_sweep(tmp_path, capsys):
    path = tmp_path / "mine.json"
    preset = {
        "schema": "autocast-explorer/preset/1",
        "name": "mine",
        "description": "A small one.",
        "config": {"widths": [16, 8, 4], "batch": 4, "head": "log_softmax", "min_time": 0.02},
        "sweep": {"param": "batch", "values": [1, 2]},
    }
    path.write_text(json.dumps(preset))
    assert main(["run", "--preset", str(path), "--topk", "2"]) == 0
    captured = capsys.readouterr()
    assert "predictions agree on" in captured.out
    assert captured.err == (
        "note: preset 'mine' also holds a batch sweep; "
        "run it with: autocast-explorer sweep --preset mine\n"
    )


@pytest.mark.parametrize(
    ("key", "content", "message"),
    [
        ("nonesuch", None, "error: preset: no preset 'nonesuch'; choose one of: tutorial, "),
        ("missing.json", None, "error: preset: missing.json: no such file"),
        ("bad.json", "{", "error: preset: bad.json: not valid JSON (line 1, column 2"),
        (
            "result.json",
            '{"schema": "autocast-explorer/result/1"}',
            "error: preset: result.json: schema 'autocast-explorer/result/1' is not",
        ),
        (
            "typo.json",
            '{"schema": "autocast-explorer/preset/1", "name": "x", "description": "y",'
            ' "config": {"bach": 4}}',
            "error: preset: typo.json: config: unknown field 'bach'",
        ),
    ],
)
@pytest.mark.parametrize("command", ["run", "sweep"])
def test_unknown_or_bad_preset_exits_2_with_one_error_line(
    command, key, content, message, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    if content is not None:
        (tmp_path / key).write_text(content)
    assert main([command, "--preset", key, *FAST]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(message), captured.err
    assert captured.err.count("\n") == 1
    assert captured.out == ""


def test_sweep_preset_uses_its_param_and_values(capsys):
    args = ["--preset", "batch-sweep", "--widths", "16,8,4", "--no-onednn"]
    assert main(["sweep", *args, "--json", "-", *FAST]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["param"] == "batch"
    assert data["values"] == list(_preset("batch-sweep").sweep.values) == [1, 8, 32, 128, 512, 2048]
    assert [p["batch"] for p in data["points"]] == data["values"]
    assert data["config"]["widths"] == [16, 8, 4]
    assert data["config"]["min_time"] == 0.02


def test_sweep_flags_override_the_presets_sweep(capsys):
    args = ["--preset", "width-sweep", "--widths", "16,8,8,4", "--no-onednn", *FAST]
    assert main(["sweep", *args, "--values", "4,12", "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["param"], data["values"]) == ("width", [4, 12])
    assert [p["widths"] for p in data["points"]] == [[16, 4, 4, 4], [16, 12, 12, 4]]
    # Another --param drops the preset's width values for that parameter's own.
    assert main(["sweep", *args, "--param", "batch", "--values", "1,3", "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["param"], data["values"]) == ("batch", [1, 3])
    assert data["config"]["batch"] == 128  # the preset's batch, swept over by --values


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_every_config_flag_defaults_to_not_given(command):
    """A default other than None would silently override the preset's value."""
    fields = {f.name for f in dataclasses.fields(ExperimentConfig)}
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    flags = [a for a in sub.choices[command]._actions if a.dest in fields]
    # Sweeps time forwards: the training fields are `run`'s alone.
    # input_image is --image's value for a user model (the flag's dest is `image`); real data
    # (--data, --checkpoint, --epochs) is `run`'s alone, as training is.
    run_only = (*TRAINING_FIELDS, "data", "checkpoint", "epochs")
    unused = {"memory_budget_mb", "input_image", *(run_only if command == "sweep" else ())}
    assert {a.dest for a in flags} >= fields - unused
    assert {a.dest: a.default for a in flags} == {a.dest: None for a in flags}

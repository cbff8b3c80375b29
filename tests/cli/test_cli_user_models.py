"""`--model SPEC` on the command line: run, sweep, train, report and compare with a user model,
and its code failing as one `error:` line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autocast_explorer.cli import main
from tests.core.test_report import reproduced

FAST = ["--min-time", "0.02"]
MODEL = """\
import torch


def build(width=12):
    net = torch.nn.Sequential(torch.nn.Linear(6, width), torch.nn.ReLU(), torch.nn.Linear(width, 3))
    return net, torch.randn(1, 6)


def broken():
    raise RuntimeError("factory broke")
"""


@pytest.fixture
def spec(tmp_path: Path) -> str:
    path = tmp_path / "my_model.py"
    path.write_text(MODEL)
    return f"{path}:build"


def test_run_writes_the_spec_and_the_model_record(spec, capsys):
    args = ["run", "--model", spec, "--model-arg", "width=10", "--batch", "4", "--json", "-"]
    assert main([*args, *FAST]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["config"]["model"] == spec
    assert data["config"]["model_args"] == {"width": 10}
    assert data["config"]["input_shape"] is None
    info = data["model_info"]
    assert info["class_name"] == "Sequential" and info["parameters"] == 6 * 10 + 10 + 10 * 3 + 3
    assert len(info["sha256"]) == 64 and info["input_shape"] == [6]
    assert [layer["autocast"]["out"] for layer in data["layers"]] == ["bfloat16"] * 3
    assert data["agreement"]["rows"] == 4


def test_hf_bert_trains_with_mse_and_the_summary_says_why_there_is_no_accuracy(tmp_path, capsys):
    out = tmp_path / "bert.json"
    tiny = ["hidden_size=32", "num_attention_heads=2", "intermediate_size=64", "vocab_size=100"]
    args = ["run", "--model", "hf:bert", "--model-arg", "num_hidden_layers=2", "--input-kind"]
    args += ["tokens", "--seq", "8", "--batch", "2", "--mode", "train", "--steps", "8"]
    args += [a for arg in tiny for a in ("--model-arg", arg)]
    assert main([*args, "--threads", "1", "--json", str(out), *FAST]) == 0
    text = capsys.readouterr().out
    train = json.loads(out.read_text())["train"]
    assert train["loss_kind"] == "mse" and train["target_shape"] == [8, 32]
    assert "accuracy" not in train
    plain, auto = train["loss"]["plain"], train["loss"]["autocast"]
    assert plain[-1] < plain[0] and auto[-1] < auto[0]
    held = train["held_out_loss"]
    assert "sgd, lr 0.05, MSE loss, same initialisation and batches" in text
    assert (
        f"held-out MSE (8 rows): float32 {held['plain']:.4g}   autocast {held['autocast']:.4g}"
    ) in text
    assert "no accuracy: the output is batch×8×32, not batch × classes logits" in text
    assert "no argmax: the output is batch×8×32 float32" in text  # the held-out agreement


def test_user_code_failing_is_one_error_line_and_exit_2(spec, capsys):
    broken = spec.replace(":build", ":broken")
    line = MODEL.splitlines().index('    raise RuntimeError("factory broke")') + 1
    assert main(["run", "--model", broken, *FAST]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err == (
        f"error: model: {broken}: calling broken: my_model.py:{line}: RuntimeError: factory broke\n"
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--model", "cnn", "--model-arg", "a=1"], "--model-arg belongs to your own model"),
        (["--model", "hf:bert", "--widths", "4,2"], "--widths belongs to --model mlp"),
        (["--model", "resnet50"], "not a family"),
        (["--model", "weights.pt2:load"], "pickled code"),
        (["--model", "model.pt2"], "'model.pt2': saved model files (.pt2, TorchScript, pickles)"),
        (["--model", "my_model.py"], "not its factory: use my_model.py:build"),
    ],
)
def test_misplaced_flags_and_bad_specs_are_refused(args, says, capsys):
    assert main(["run", *args, *FAST]) == 2
    assert says in capsys.readouterr().err


def test_model_arg_help_shows_a_json_list(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "a JSON list of those ([1,2]" in help_text and "depths=[1,1]" in help_text


@pytest.mark.slow  # four commands, each timing a user model (~5 s of CPU)
def test_sweep_train_report_and_compare_with_a_user_model(spec, tmp_path, capsys):
    sweep = tmp_path / "sweep.json"
    assert main(["sweep", "--model", spec, "--values", "1,4", "--json", str(sweep), *FAST]) == 0
    points = json.loads(sweep.read_text())["points"]
    assert [p["batch"] for p in points] == [1, 4]
    trained = tmp_path / "train.json"
    args = ["run", "--model", spec, "--mode", "train", "--steps", "2", "--batch", "4"]
    assert main([*args, "--json", str(trained), *FAST]) == 0
    assert json.loads(trained.read_text())["train"]["loss_dtype"]["autocast"] == "float32"
    report = tmp_path / "report"
    assert main(["run", "--model", spec, "--batch", "3", "--report", str(report), *FAST]) == 0
    found = reproduced(report)
    assert found["same"] == {"output_dtype": True, "layers": True, "agreement": True}
    capsys.readouterr()
    assert main(["compare", str(report / "result.json"), str(trained)]) == 0
    assert "my_model.py:build" in capsys.readouterr().out


DIGIT_MODEL = """\
import torch


def flat(classes=10):
    return torch.nn.Sequential(
        torch.nn.Flatten(), torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, classes)
    )


def rows():
    return torch.nn.Sequential(torch.nn.Linear(64, 10))
"""


@pytest.mark.parametrize(("factory", "shape"), [("flat", [1, 8, 8]), ("rows", [64])])
def test_your_own_model_trains_on_the_digits_and_is_compared_on_held_out_rows(
    tmp_path, capsys, factory, shape
):
    """The rows go in as they are (1×8×8) when the model takes them, else flattened (64)."""
    path = tmp_path / "digit_model.py"
    path.write_text(DIGIT_MODEL)
    args = ["run", "--model", f"{path}:{factory}", "--data", "digits", "--epochs", "10"]
    assert main([*args, "--threads", "1", "--json", "-", *FAST]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["config"]["input_shape"] == shape
    assert data["data"]["name"] == "digits" and data["data"]["n_test"] == 449
    accuracy = data["accuracy"]
    assert accuracy["plain"] > 0.85  # ten epochs of a small net on the easy digits
    assert abs(accuracy["autocast"] - accuracy["plain"]) <= 0.05


def test_your_own_model_whose_logits_miss_the_classes_is_one_line(tmp_path, capsys):
    path = tmp_path / "digit_model.py"
    path.write_text(DIGIT_MODEL)
    args = ["run", "--model", f"{path}:flat", "--model-arg", "classes=5", "--data", "digits"]
    assert main([*args, *FAST]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert err.startswith("error: data: y: the data has 10 classes, but ")
    assert "outputs batch×5" in err

"""`run --data`: the digits, a user's file with a checkpoint, and one line for every bad file."""

import json

import numpy as np
import pytest
import torch

from autocast_explorer.cli import main
from autocast_explorer.core.data.dataset import load_digits
from autocast_explorer.core.data.safetensors import write_safetensors
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.model import build_model

FAST = ["--min-time", "0.02", "--threads", "1"]
SMALL = ["--widths", "64,32,10", "--epochs", "3", "--batch", "64"]


@pytest.fixture
def digits_npz(tmp_path):
    d = load_digits()
    path = tmp_path / "digits.npz"
    np.savez(path, x=d.x[:300, 0] / 16.0, y=d.y[:300])  # (N, 8, 8) images, scaled already
    return path


def test_run_on_the_digits_prints_accuracies_interval_and_flips(capsys):
    assert main(["run", "--data", "digits", *SMALL, *FAST, "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["config"]["widths"] == [64, 32, 10] and data["config"]["data"] == "digits"
    assert data["data"]["name"] == "digits"
    assert (data["data"]["n_train"], data["data"]["n_test"]) == (1348, 449)
    acc = data["accuracy"]
    assert 0 <= acc["plain"] <= 1 and acc["dtype"] == "bfloat16"
    low, high = acc["interval"]
    assert low <= acc["autocast"] - acc["plain"] <= high
    assert len(data["data"]["history"]) == 3


def test_the_summary_lists_at_most_ten_flips_then_a_count(capsys, monkeypatch):
    import autocast_explorer.core.experiment.data_run as prepare_module
    from autocast_explorer.core.data import answers

    real = answers.compare_answers

    def every_row_flips(labels, plain, auto, *args, **kwargs):
        return real(labels, plain, np.roll(plain, 1, axis=1), *args, **kwargs)

    monkeypatch.setattr(prepare_module, "compare_answers", every_row_flips)
    assert main(["run", "--data", "digits", *SMALL, *FAST]) == 0
    out = capsys.readouterr().out
    assert "Held-out accuracy (digits: trained 3 epochs in float32 on 1,348 rows" in out
    assert "difference " in out and "95% interval" in out
    assert "Flipped rows (449):" in out
    assert out.count("  row ") == 10 and "  … and 439 more" in out


@pytest.mark.parametrize("suffix", [".safetensors", ".pt"])
def test_a_checkpoint_is_evaluated_instead_of_trained(tmp_path, capsys, digits_npz, suffix):
    config = ExperimentConfig(model="cnn", channels=(1, 8), image=8, classes=10)
    model = build_model(config)
    weights = tmp_path / f"w{suffix}"
    if suffix == ".pt":
        torch.save(model.state_dict(), weights)
    else:
        write_safetensors(weights, {k: v.numpy() for k, v in model.state_dict().items()})
    argv = ["run", "--model", "cnn", "--channels", "1,8", "--data", str(digits_npz)]
    assert main([*argv, "--checkpoint", str(weights), *FAST, "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["data"]["checkpoint"] == weights.name
    assert (data["data"]["n_train"], data["data"]["n_test"], data["data"]["epochs"]) == (0, 300, 0)
    assert data["data"]["shape"] == [1, 8, 8] and data["data"]["history"] == []
    # Same weights, same rows: the float32 answers are those of the untrained seeded model.
    x = torch.from_numpy(np.load(digits_npz)["x"].astype(np.float32)).reshape(-1, 1, 8, 8)
    with torch.no_grad():
        expected = (model(x).argmax(1).numpy() == np.load(digits_npz)["y"]).mean()
    assert data["accuracy"]["plain"] == pytest.approx(expected, abs=1e-9)


def _text(path, content):
    path.write_text(content)
    return str(path)


def _bad(tmp_path, name, **arrays):
    path = tmp_path / name
    np.savez(path, **arrays)
    return str(path)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: _bad(p, "a.npz", y=np.zeros(4)), "data: a.npz has no array 'x' (found: y)"),
        (lambda p: _bad(p, "b.npz", x=np.zeros((4, 64))), "data: b.npz has no array 'y'"),
        (
            lambda p: _bad(p, "c.npz", x=np.zeros((4, 64)), y=np.zeros(3)),
            "data: x has 4 rows but y has 3: lengths differ",
        ),
        (
            lambda p: _bad(p, "d.npz", x=np.full((4, 64), np.nan), y=np.zeros(4)),
            "data: x: 4 rows hold NaN or inf (first: row 0)",
        ),
        (
            lambda p: _bad(p, "e.npz", x=np.zeros((4, 64)), y=np.array([0, 1, -2, 1])),
            "data: y: labels must be in 0…1 (row 2 holds -2)",
        ),
        (
            lambda p: _bad(p, "f.npz", x=np.zeros((4, 9, 7)), y=np.arange(4) % 2),
            "data: x: the CNN takes square images, got 9×7",
        ),
        (lambda p: str(p / "missing.npz"), "missing.npz: no such file"),
        (lambda p: _text(p / "g.npz", "nope"), "data: g.npz: not a .npz archive"),
        (lambda p: _text(p / "h.pt", ""), "data: h.pt: the file is empty (0 bytes)"),
        (
            lambda p: _bad(p, "i.npz", x=np.zeros((40, 0)), y=np.arange(40) % 2),
            "data: x: each row must hold at least one value (got shape (40, 0))",
        ),
        (
            lambda p: _bad(p, "j.npz", x=np.zeros((4, 64)), y=np.zeros(4, np.int64)),
            "data: y: every row has label 0: held-out accuracy needs at least 2 classes",
        ),
        (
            lambda p: _bad(p, "k.npz", x=np.zeros((4, 8, 8)), y=np.array([0, 1, 1, 10**9])),
            "data: y: 1,000,000,001 classes (labels 0…1000000000) are more than the CNN can",
        ),
        (lambda p: (p / "l.npz").mkdir() or str(p / "l.npz"), "l.npz: is a folder, not a file"),
    ],
)
def test_every_bad_data_file_is_one_line_and_exit_2(tmp_path, capsys, make, words):
    assert main(["run", "--model", "cnn", "--data", make(tmp_path), *FAST]) == 2
    err = capsys.readouterr().err
    assert words in err and err.startswith("error: ") and err.count("\n") == 1


def test_a_checkpoint_whose_keys_or_shapes_do_not_match_is_one_line(tmp_path, capsys, digits_npz):
    weights = tmp_path / "w.safetensors"
    write_safetensors(weights, {"fc1.weight": np.zeros((32, 64), np.float32)})
    argv = ["run", "--data", str(digits_npz), "--widths", "64,32,10", *FAST]
    assert main([*argv, "--checkpoint", str(weights)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: checkpoint: keys do not match the MLP 64,32,10: missing ")
    assert "fc1.bias, fc2.weight, fc2.bias" in err and err.count("\n") == 1
    write_safetensors(
        weights,
        {
            k: np.zeros((2, 2), np.float32)
            for k in ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")
        },
    )
    assert main([*argv, "--checkpoint", str(weights)]) == 2
    err = capsys.readouterr().err
    assert (
        "checkpoint: shapes do not match the MLP 64,32,10: fc1.weight is (2, 2) in the file "
        "but (32, 64) in the model;"
        in err
        and "… and" not in err
    )


def test_training_mode_scores_both_copies_on_the_held_out_rows_every_epoch(capsys):
    argv = ["run", "--mode", "train", "--data", "digits", *SMALL, *FAST, "--json", "-"]
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    epochs = data["train"]["epochs"]
    assert [e["epoch"] for e in epochs] == [1, 2, 3]
    assert data["train"]["steps"] == 3 * 22 == epochs[-1]["step"]  # 1,348 rows in batches of 64
    assert all(0 <= e["accuracy"][m] <= 1 for e in epochs for m in ("plain", "autocast"))
    assert data["train"]["accuracy"]["plain"] == epochs[-1]["accuracy"]["plain"]
    assert data["data"]["n_test"] == data["train"]["held_out_rows"] == 449

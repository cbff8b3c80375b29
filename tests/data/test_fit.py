"""Training on the digits (seeded, one thread), checkpoints, and the config fitted to the data."""

import numpy as np
import pytest
import torch

from autocast_explorer.core.data.dataset import dataset_from_arrays
from autocast_explorer.core.data.errors import DataError
from autocast_explorer.core.experiment.config import ConfigError, ExperimentConfig
from autocast_explorer.core.experiment.data_fit import fit_config, load_checkpoint
from autocast_explorer.core.experiment.data_run import fitted, prepare
from autocast_explorer.core.experiment.model import build_model
from autocast_explorer.core.runtime.progress import Reporter


@pytest.fixture
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_the_digits_train_to_95_percent_held_out_in_float32(one_thread, model):
    config, dataset = fitted(ExperimentConfig(model=model, data="digits", dtype="bfloat16"))
    done = prepare(config, dataset, Reporter())
    acc = done.accuracy
    assert acc.plain >= 0.95, acc.plain
    assert acc.rows == done.info.n_test == 449 and done.info.n_train == 1348
    assert len(done.info.history) == config.epochs
    assert done.info.history[-1].accuracy == acc.plain  # the last epoch's score is the result's
    assert acc.interval[0] <= acc.difference <= acc.interval[1]
    # The timed batch is held-out rows shaped for the model, not random numbers.
    assert tuple(done.x.shape) == ((128, 64) if model == "mlp" else (128, 1, 8, 8))
    assert float(done.x.min()) == 0.0 and float(done.x.max()) <= 1.0


def test_the_config_takes_its_input_and_classes_from_the_data():
    digits = dataset_from_arrays("d", {"x": np.zeros((6, 1, 8, 8)), "y": np.arange(6) % 4})
    mlp = fit_config(ExperimentConfig(widths=(256, 32, 10)), digits)
    assert mlp.widths == (64, 32, 4)
    cnn = fit_config(ExperimentConfig(model="cnn"), digits)
    assert (cnn.channels, cnn.image, cnn.classes) == ((1, 32, 64), 8, 4)


@pytest.mark.parametrize(
    ("x", "config", "words"),
    [
        (np.zeros((6, 10)), ExperimentConfig(model="cnn"), "x: rows of shape (10,) are not images"),
        (np.zeros((6, 1, 8, 6)), ExperimentConfig(model="cnn"), "square images, got 8×6"),
        (
            np.zeros((6, 3, 2, 2)),
            ExperimentConfig(model="cnn"),
            "2×2 images are too small for 2 pooling stages",
        ),
    ],
)
def test_a_shape_the_model_rejects_is_one_line(x, config, words):
    data = dataset_from_arrays("d", {"x": x, "y": np.arange(6) % 2})
    with pytest.raises(DataError, match=words.replace("(", r"\(").replace(")", r"\)")):
        fit_config(config, data)


def test_data_fields_are_checked_without_reading_files():
    with pytest.raises(ConfigError, match=r"data: must be synthetic, digits or a .npz"):
        ExperimentConfig(data="mine.csv")
    with pytest.raises(ConfigError, match="checkpoint: needs real data"):
        ExperimentConfig(checkpoint="w.pt")
    with pytest.raises(ConfigError, match="data: real data needs model mlp, cnn or your own"):
        ExperimentConfig(model="rnn", data="digits")
    with pytest.raises(ConfigError, match="epochs: must be a whole number"):
        ExperimentConfig(data="digits", epochs=0)
    # Synthetic runs write no data fields, so every older document reads the same.
    assert "data" not in ExperimentConfig().to_dict()
    assert ExperimentConfig(data="digits").to_dict()["data"] == "digits"


def test_a_checkpoint_that_does_not_match_lists_the_first_keys_and_shapes():
    model = build_model(ExperimentConfig(widths=(64, 32, 10)))
    state = {k: v.clone() for k, v in model.state_dict().items()}
    with pytest.raises(
        DataError,
        match=r"checkpoint: keys do not match the MLP 64,32,10: "
        r"missing fc1.weight; unexpected conv1.weight",
    ):
        load_checkpoint(
            model,
            {
                **{k: v for k, v in state.items() if k != "fc1.weight"},
                "conv1.weight": torch.zeros(1),
            },
            "MLP 64,32,10",
        )
    state["fc2.weight"] = torch.zeros(5, 32)
    with pytest.raises(DataError, match=r"fc2.weight is \(5, 32\) in the file but \(10, 32\)"):
        load_checkpoint(model, state, "MLP 64,32,10")
    state["fc2.weight"] = torch.full((10, 32), float("nan"))
    with pytest.raises(DataError, match=r"fc2\.weight hold NaN or inf"):
        load_checkpoint(model, state, "MLP 64,32,10")


@pytest.mark.parametrize(
    ("arrays", "model", "words"),
    [
        (
            {"x": np.zeros((4, 6)), "y": np.array([0, 1, 2, 10**9])},
            "mlp",
            "data: y: 1,000,000,001 classes (labels 0…1000000000) are more than the MLP can "
            "output (at most 1,048,576)",
        ),
        (
            {"x": np.zeros((4, 1, 4, 4)), "y": np.array([0, 1, 2, 2**20])},
            "cnn",
            "data: y: 1,048,577 classes (labels 0…1048576) are more than the CNN can output",
        ),
        (
            {"x": np.zeros((2, 2**20 + 1), np.int8), "y": np.array([0, 1])},
            "mlp",
            "data: x: rows of 1,048,577 values are more than the MLP takes (at most 1,048,576 "
            "inputs)",
        ),
        (
            {"x": np.zeros((2, 2**16 + 1, 2, 2), np.int8), "y": np.array([0, 1])},
            "cnn",
            "data: x: images of 65,537 channels are more than the CNN takes (at most 65,536)",
        ),
    ],
)
def test_data_the_model_cannot_take_blames_the_array_not_the_widths(arrays, model, words):
    data = dataset_from_arrays("d", arrays)
    with pytest.raises(DataError) as caught:
        fit_config(ExperimentConfig(model=model), data)
    assert str(caught.value).startswith(words)

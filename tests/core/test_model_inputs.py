"""What a run feeds a model: the input read from the model itself (a Hugging Face model's
main_input_name and config; a factory's vocabulary from the model, never from its example), the
decoder input an encoder-decoder needs, and the result's `input` record of what was fed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.families.user.errors import UserModelError
from autocast_explorer.core.experiment.families.user.probe import probe
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.experiment.summary import format_summary
from autocast_explorer.core.reports.report import report_markdown, write_report
from tests.core.test_report import reproduced

FAST = {"min_time": 0.01, "threads": 1}
#: Tiny Hugging Face models (random weights, built from their configs): one layer, 16 wide.
LAYER = {"num_hidden_layers": 1, "hidden_size": 16, "num_attention_heads": 2}
SEQ2SEQ = {
    "d_model": 16,
    "encoder_layers": 1,
    "decoder_layers": 1,
    "encoder_attention_heads": 2,
    "decoder_attention_heads": 2,
    "encoder_ffn_dim": 32,
    "decoder_ffn_dim": 32,
}
TINY = {
    "t5": {
        "d_model": 16,
        "d_ff": 32,
        "num_layers": 1,
        "num_heads": 2,
        "d_kv": 8,
        "vocab_size": 100,
    },
    "bart": {**SEQ2SEQ, "vocab_size": 100},
    # The vocabulary stays Whisper's own: its special tokens (start 50257) lie near its end.
    "whisper": {**SEQ2SEQ, "num_mel_bins": 8, "max_source_positions": 16},
    "wav2vec2": {
        **LAYER,
        "intermediate_size": 32,
        "conv_dim": [8, 8],
        "conv_kernel": [10, 3],
        "conv_stride": [5, 2],
        "num_conv_pos_embeddings": 16,
        "num_conv_pos_embedding_groups": 2,
    },
    "vit": {**LAYER, "intermediate_size": 32, "image_size": 32, "patch_size": 8},
    "clip_text_model": {**LAYER, "intermediate_size": 32, "vocab_size": 100},
    "clip_vision_model": {**LAYER, "intermediate_size": 32, "image_size": 32, "patch_size": 8},
    "swin": {"embed_dim": 8, "depths": [1], "num_heads": [2], "image_size": 32, "window_size": 4},
}


def _hf(name: str, **fields: object) -> ExperimentConfig:
    """The tiny model with no input flags: what it is fed comes from the model alone."""
    sizes: dict[str, object] = {"seq": 8, "batch": 2, **fields}
    return ExperimentConfig(model=f"hf:{name}", model_args=TINY[name], **sizes)


# ---- Hugging Face models: the input their class names, sized by their config ----------------


@pytest.mark.parametrize(
    ("name", "kind", "argument", "shape", "dtype"),
    [
        ("t5", "tokens", "input_ids", [2, 8], "int64"),
        ("bart", "tokens", "input_ids", [2, 8], "int64"),
        # 8 mel bins × 2·16 frames: the length Whisper's encoder requires
        ("whisper", "features", "input_features", [2, 8, 32], "float32"),
        # 90 samples: (8 - 1)·2 + 3 = 17 after the first convolution, (17 - 1)·5 + 10 = 90
        ("wav2vec2", "audio", "input_values", [2, 90], "float32"),
    ],
)
def test_hf_models_run_end_to_end_on_what_they_take(name, kind, argument, shape, dtype) -> None:
    result = run_experiment(_hf(name, **FAST))
    fed = result.to_dict()["input"]
    assert (fed["kind"], fed["name"], fed["shape"], fed["dtype"]) == (kind, argument, shape, dtype)
    assert fed["low"] < fed["high"]
    if kind == "tokens":
        assert fed["low"] >= 0 and fed["high"] < 100 and isinstance(fed["high"], int)
    names = {layer.name.split(".")[0] for layer in result.layers}
    encoder_decoder = name != "wav2vec2"
    assert ("decoder" in names) is encoder_decoder  # the whole model ran
    assert bool(fed["companions"]) is encoder_decoder
    assert result.agreement is not None and result.autocast is not None
    assert ExperimentResult.from_json(result.to_json()).input == result.input


@pytest.mark.process
def test_reproduce_py_feeds_an_encoder_decoder_as_the_run_did(tmp_path) -> None:
    # The script rebuilds hf:t5 through the explorer's loader: the same decoder input, so the
    # decoder's rows and the agreement are the report's.
    result = run_experiment(_hf("t5", **FAST))
    write_report(result, tmp_path)
    found = reproduced(tmp_path)
    assert found["same"] == {"output_dtype": True, "layers": True, "agreement": True}


@pytest.mark.parametrize(("name", "start", "vocab"), [("t5", 0, 100), ("whisper", 50257, 51865)])
def test_an_encoder_decoder_gets_decoder_ids_from_its_start_token(name, start, vocab) -> None:
    plan = probe(_hf(name, **FAST)).plan
    ids = plan.feed.decoder_ids
    assert ids is not None and ids.shape == (8,) and int(ids[0]) == start
    assert int(ids.max()) < vocab
    fed = plan.feed.companions(plan.draw(_hf(name), 3))
    assert fed["decoder_input_ids"].shape == (3, 8)


@pytest.mark.parametrize(
    ("name", "kind", "argument", "shape"),
    [
        ("vit", "pixels", "pixel_values", (3, 32, 32)),
        ("clip_vision_model", "pixels", "pixel_values", (3, 32, 32)),
        ("clip_text_model", "tokens", "input_ids", (8,)),
    ],
)
def test_vision_models_and_clip_towers_take_their_own_input(name, kind, argument, shape) -> None:
    plan = probe(_hf(name, **FAST)).plan
    assert (plan.kind, plan.name, plan.shape) == (kind, argument, shape)
    assert plan.vocab == (100 if kind == "tokens" else None)


def test_clip_whole_is_refused_naming_its_towers() -> None:
    with pytest.raises(UserModelError) as caught:
        probe(ExperimentConfig(model="hf:clip"))
    assert str(caught.value) == (
        "model: hf:clip: it takes token ids and images in one call, which a run cannot feed; "
        "run one tower alone: hf:clip_text_model or hf:clip_vision_model"
    )


def test_the_users_flags_override_what_the_model_states() -> None:
    plan = probe(_hf("t5", vocab=10, seq=5, **FAST)).plan
    assert (plan.shape, plan.vocab) == ((5,), 10)
    result = run_experiment(_hf("t5", vocab=10, seq=5, **FAST))
    assert result.input is not None and result.input.high <= 9


def test_swins_relative_position_bias_is_a_row_fed_no_tensor() -> None:
    # SwinRelativePositionBias is called with no argument: its output comes from its own table.
    result = run_experiment(_hf("swin", layer_depth=12, **FAST))
    (bias,) = [layer for layer in result.layers if layer.name.endswith("relative_position_bias")]
    assert bias.kind == "SwinRelativePositionBias" and bias.out_shape == (1, 2, 16, 16)
    assert (bias.plain.in_dtype, bias.plain.out_dtype) == ("none", "float32")
    assert bias.autocast is not None and bias.autocast.in_dtype == "none"


# ---- a factory's token ids: below the vocabulary the model states ---------------------------

TOKEN_MODELS = """\
import torch


class Logged(torch.nn.Module):
    # Writes every id it is fed to `log`, one batch a line.

    def __init__(self, log, vocab_size=None):
        super().__init__()
        self.log = log
        if vocab_size is not None:
            self.vocab_size = vocab_size
        self.embed = torch.nn.Embedding(50, 8)
        self.head = torch.nn.Linear(8, 4)

    def forward(self, tokens):
        with open(self.log, "a") as f:
            f.write(" ".join(map(str, tokens.flatten().tolist())) + "\\n")
        return self.head(self.embed(tokens).mean(dim=1))


def embedding(log):
    # An example of zeros: its largest id says nothing of the vocabulary.
    return Logged(log), torch.zeros(1, 16, dtype=torch.long)


def stated(log):
    return Logged(log, vocab_size=30), torch.zeros(1, 16, dtype=torch.long)


class NoVocabulary(torch.nn.Module):
    def forward(self, ids):
        return ids.float() * 2


def unstated():
    return NoVocabulary(), torch.zeros(1, 4, dtype=torch.long)
"""


@pytest.fixture
def token_models(tmp_path: Path) -> Path:
    path = tmp_path / "tokens.py"
    path.write_text(TOKEN_MODELS)
    return path


def _seen(log: Path) -> list[int]:
    return [int(i) for line in log.read_text().splitlines() for i in line.split()]


def test_token_ids_span_the_vocabulary_not_the_examples_range(token_models, tmp_path) -> None:
    log = tmp_path / "seen.txt"
    config = ExperimentConfig(
        model=f"{token_models}:embedding", model_args={"log": str(log)}, batch=16, **FAST
    )
    result = run_experiment(config)
    seen = _seen(log)
    # 16 × 16 ids drawn uniformly below 50 (the example's zeros would have given only 0)
    assert min(seen) == 0 and max(seen) == 49 and len(set(seen)) > 40
    fed = result.input
    assert fed is not None and (fed.kind, fed.name, fed.shape) == ("tokens", "tokens", (16, 16))
    assert (fed.low, fed.high) == (0, 49)
    line = "tokens 16×16 int64 as tokens, ids 0 … 49"
    assert f"\nInput fed: {line}\n" in format_summary(result)
    assert f"| input fed | {line} |" in report_markdown(result)


def test_a_vocab_size_attribute_and_vocab_come_before_the_embedding(token_models, tmp_path):
    spec, log = str(token_models), {"log": str(tmp_path / "seen.txt")}
    assert probe(ExperimentConfig(model=f"{spec}:stated", model_args=log)).plan.vocab == 30
    given = ExperimentConfig(model=f"{spec}:embedding", model_args=log, vocab=7)
    assert probe(given).plan.vocab == 7


def test_token_ids_without_a_stated_vocabulary_are_refused(token_models) -> None:
    spec = f"{token_models}:unstated"
    with pytest.raises(UserModelError) as caught:
        probe(ExperimentConfig(model=spec))
    assert str(caught.value) == (
        f"model: {spec}: the model takes token ids but states no vocabulary (no vocab_size "
        "attribute, no nn.Embedding): give --vocab N (ids are drawn below N)"
    )
    assert probe(ExperimentConfig(model=spec, vocab=5, **FAST)).plan.vocab == 5


# ---- every model's result records its input ------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "kind", "shape"),
    [
        ({"model": "mlp", "widths": (6, 4, 3)}, "float", (2, 6)),
        ({"model": "cnn", "channels": (3, 4), "image": 8}, "pixels", (2, 3, 8, 8)),
    ],
)
def test_the_families_record_their_input(fields, kind, shape) -> None:
    result = run_experiment(ExperimentConfig(batch=2, **fields, **FAST))
    fed = result.input
    assert fed is not None and (fed.kind, fed.name, fed.shape, fed.dtype) == (
        kind,
        "input",  # nn.Sequential.forward(input)
        shape,
        "float32",
    )
    assert fed.low < 0 < fed.high and fed.companions == ()


def test_training_records_every_batch_it_fed(token_models, tmp_path) -> None:
    log = tmp_path / "seen.txt"
    config = ExperimentConfig(
        model=f"{token_models}:embedding",
        model_args={"log": str(log)},
        batch=4,
        mode="train",
        steps=2,
        **FAST,
    )
    fed = run_experiment(config).input
    assert fed is not None and fed.shape == (4, 16) and fed.kind == "tokens"
    assert (fed.low, fed.high) == (0, 49)


def test_the_input_is_written_and_read_back_and_older_files_lack_it() -> None:
    result = run_experiment(ExperimentConfig(widths=(4, 3), batch=2, **FAST))
    data = json.loads(result.to_json())
    assert set(data["input"]) == {"kind", "name", "shape", "dtype", "low", "high", "companions"}
    assert ExperimentResult.from_dict(data).input == result.input
    del data["input"]
    assert ExperimentResult.from_dict(data).input is None
    data["input"] = {**result.to_dict()["input"], "low": None}
    assert str(ExperimentResult.from_dict(data).input.low) == "nan"

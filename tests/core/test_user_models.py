"""Your own model (`--model SPEC`): specs, building offline, the batch-1 probe, layer rows by
depth, one-line errors naming the user's frame, and full runs at tiny sizes."""

from __future__ import annotations

import hashlib
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from autocast_explorer.core.experiment.config import ConfigError, ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.families.user.depth import default_depth, shown_names
from autocast_explorer.core.experiment.families.user.errors import UserModelError
from autocast_explorer.core.experiment.families.user.probe import probe
from autocast_explorer.core.experiment.families.user.spec import parse_spec
from autocast_explorer.core.experiment.guards import estimate_forward
from autocast_explorer.core.experiment.model_args import normalise_model_args, parse_value
from autocast_explorer.core.experiment.result import ExperimentResult, ResultFormatError
from autocast_explorer.core.experiment.summary import format_summary
from autocast_explorer.core.learning.compare import compare_results, training_table
from autocast_explorer.core.reports.report import report_markdown, write_report
from tests.core.test_report import reproduced

FAST = {"min_time": 0.01}
#: A tiny Hugging Face ResNet (random weights, built from its config): two stages, 16/32 wide.
TINY_RESNET = {"depths": [1, 1], "hidden_sizes": [16, 32], "embedding_size": 8}
TINY_BERT = {
    "num_hidden_layers": 1,
    "hidden_size": 32,
    "num_attention_heads": 2,
    "intermediate_size": 64,
    "vocab_size": 100,
}

MODEL_FILE = """\
import torch


def build(width=16):
    return torch.nn.Sequential(
        torch.nn.Linear(8, width), torch.nn.ReLU(), torch.nn.Linear(width, 4)
    ), torch.randn(1, 8)


def no_example():
    return torch.nn.Linear(8, 4)


def raises():
    raise RuntimeError("factory broke")


def not_a_module():
    return 42


class Picky(torch.nn.Module):
    def forward(self, x):
        if x.shape[-1] != 5:
            raise ValueError("wants 5 features")
        return x


def picky():
    return Picky(), torch.randn(1, 8)


class Regress(torch.nn.Module):
    # No logits: a regression output of shape batch × 3 × 5.

    def __init__(self):
        super().__init__()
        self.body = torch.nn.Linear(8, 16)
        self.head = torch.nn.Linear(16, 15)

    def forward(self, x):
        return self.head(torch.relu(self.body(x))).reshape(-1, 3, 5)


def regress():
    return Regress(), torch.randn(1, 8)
"""


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "my_model.py"
    path.write_text(MODEL_FILE)
    return path


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


# ---- specs (torch-free) -----------------------------------------------------------------------


def test_specs_parse_into_their_kinds() -> None:
    assert parse_spec("hf:bert").kind == "hf"
    assert parse_spec("torchvision:resnet18").target == "resnet18"
    assert parse_spec("timm:vit_tiny_patch16_224").kind == "timm"
    mod = parse_spec("pkg.models:build")
    assert (mod.kind, mod.target, mod.factory) == ("module", "pkg.models", "build")
    f = parse_spec("some/dir/my_model.py:make")
    assert (f.kind, f.target, f.factory, f.short) == (
        "file",
        "some/dir/my_model.py",
        "make",
        "my_model.py:make",
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("bert", "not a built-in model"),
        ("hf:google/bert", "without a hub path"),
        ("model.pt2:build", "pickled code"),
        ("weights.pth:x", "pickled code"),
        ("my_model.py:not-a-name", "not a Python name"),
        ("a b:c", "neither a .py file nor a module path"),
    ],
)
def test_bad_specs_say_what_a_spec_is(text: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        ExperimentConfig(model=text)


def test_model_args_are_typed() -> None:
    assert [parse_value(v) for v in ("2", "0.5", "true", "False", "gelu", "[1,2]")] == [
        2,
        0.5,
        True,
        False,
        "gelu",
        (1, 2),
    ]
    assert normalise_model_args(["b=1", "a=x"]) == (("a", "x"), ("b", 1))
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        normalise_model_args(["nokey"])
    config = ExperimentConfig(model="hf:bert", model_args={"depths": [1, 1]})
    assert config.to_dict()["model_args"] == {"depths": [1, 1]}
    assert ExperimentConfig.from_dict(config.to_dict()) == config


def test_family_documents_leave_the_user_fields_out() -> None:
    data = ExperimentConfig().to_dict()
    assert not {"model_args", "input_shape", "input_kind", "layer_depth"} & set(data)


# ---- layer rows by depth ----------------------------------------------------------------------


def test_rows_at_a_depth_stand_for_everything_inside() -> None:
    names = ["a", "a.x", "a.y", "a.y.p", "a.y.q", "b", "c.d.e"]
    assert shown_names(names, 1) == {"a", "b", "c.d.e"}
    assert shown_names(names, 2) == {"a.x", "a.y", "b", "c.d.e"}
    assert shown_names(names, 3) == {"a.x", "a.y.p", "a.y.q", "b", "c.d.e"}
    assert default_depth(names, max_rows=4) == 2
    assert default_depth(names, max_rows=100) == 3
    assert default_depth(names, max_rows=1) == 1


# ---- a file's factory ------------------------------------------------------------------------


def test_a_file_model_runs_with_every_view(model_file: Path) -> None:
    config = ExperimentConfig(model=f"{model_file}:build", batch=3, **FAST)
    result = run_experiment(config)
    assert [layer.name for layer in result.layers] == ["0", "1", "2"]
    assert [layer.autocast.out_dtype for layer in result.layers] == ["bfloat16"] * 3
    assert all(layer.error is not None for layer in result.layers)
    info = result.model_info
    assert info is not None
    assert info.sha256 == hashlib.sha256(model_file.read_bytes()).hexdigest()
    assert (info.class_name, info.parameters) == ("Sequential", 8 * 16 + 16 + 16 * 4 + 4)
    assert (info.input_shape, info.output_shape, info.input_kind) == ((8,), (3, 4), "float")
    assert result.agreement is not None and result.agreement.rows == 3
    assert result.flops == 3 * 2 * (8 * 16 + 16 * 4)  # FlopCounterMode: the two Linear layers
    assert result.op_trace is not None
    casts = result.op_trace.casts
    assert casts.by_source == {"0.weight": 1, "0.bias": 1, "2.weight": 1, "2.bias": 1}
    assert casts.by_kind == {"Linear.weight": 2, "Linear.bias": 2}
    loaded = ExperimentResult.from_json(result.to_json())
    assert loaded.model_info == info
    assert loaded.config.model == f"{model_file}:build"


def test_the_time_guard_uses_the_models_own_ops(model_file: Path) -> None:
    config = ExperimentConfig(model=f"{model_file}:build", batch=20, **FAST)
    estimate = estimate_forward(config)
    assert estimate.basis.startswith("every op of the forward traced at full size on fake tensors")
    assert "; nn.Linear at 16×16→16;" in estimate.basis  # batch 20, 8 → 16 → 4, rounded
    assert estimate.seconds > 0


@pytest.mark.parametrize(
    ("factory", "pattern"),
    [
        ("raises", r"calling raises: my_model\.py:{raises}: RuntimeError: factory broke"),
        ("not_a_module", r"not_a_module returned int, not an nn\.Module"),
        ("picky", r"the forward \(input 1×8 float32\): my_model\.py:{picky}: ValueError"),
        ("missing", r"'missing' is not a callable"),
        ("no_example", r"give --input-shape"),
    ],
)
def test_user_code_failing_is_one_line(model_file: Path, factory: str, pattern: str) -> None:
    lines = {
        "raises": _line_of(MODEL_FILE, 'raise RuntimeError("factory broke")'),
        "picky": _line_of(MODEL_FILE, 'raise ValueError("wants 5 features")'),
    }
    config = ExperimentConfig(model=f"{model_file}:{factory}", **FAST)
    with pytest.raises(UserModelError, match=pattern.format(**lines)) as caught:
        run_experiment(config)
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith(f"model: {model_file}:{factory}: ")


def test_an_import_error_names_the_files_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.py"
    path.write_text("import torch\n\nx = 1 / 0\n")
    with pytest.raises(UserModelError, match=r"importing it: broken\.py:3: ZeroDivisionError"):
        probe(ExperimentConfig(model=f"{path}:build"))
    with pytest.raises(UserModelError, match="no such file"):
        probe(ExperimentConfig(model=f"{tmp_path / 'absent.py'}:build"))


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("folder", "is a folder, not a file"),
        ("fifo", "is a FIFO (a named pipe), not a file"),
        ("loop", "is a symbolic link loop"),
    ],
)
def test_a_model_file_that_is_a_folder_fifo_or_loop_is_named(tmp_path: Path, kind, words) -> None:
    import os

    path = tmp_path / "m.py"
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(path.name)
    with pytest.raises(UserModelError) as caught:
        probe(ExperimentConfig(model=f"{path}:build"))
    assert str(caught.value) == f"model: {path}:build: {path}: {words}"


def test_the_shipped_example_runs_as_a_module_spec() -> None:
    spec = "autocast_explorer.examples.my_model:build"
    config = ExperimentConfig(model=spec, model_args={"width": 8, "image": 8}, batch=2, **FAST)
    result = run_experiment(config)
    assert result.model_info is not None and result.model_info.class_name == "SmallNet"
    assert result.model_info.input_shape == (3, 8, 8)
    kinds = {layer.kind: layer.autocast.out_dtype for layer in result.layers}
    assert kinds["Conv2d"] == "bfloat16" and kinds["Linear"] == "bfloat16"


def test_training_a_classifier_file_model(model_file: Path) -> None:
    config = ExperimentConfig(model=f"{model_file}:build", batch=4, mode="train", steps=2, **FAST)
    result = run_experiment(config)
    assert result.train is not None
    assert result.train.loss_dtype == {"plain": "float32", "autocast": "float32"}
    assert len(result.train.loss["autocast"]) == 2
    assert result.train.loss_kind == "cross_entropy" and result.train.has_accuracy
    assert set(result.train.accuracy) == {"plain", "autocast"}
    data = result.to_dict()["train"]
    assert data["loss_kind"] == "cross_entropy" and "target_shape" not in data
    assert all(math.isfinite(v) and v > 0 for v in data["held_out_loss"].values())


def _falls(losses: tuple[float, ...]) -> bool:
    """The mean of the last three steps is below half the first step's loss."""
    return sum(losses[-3:]) / 3 < 0.5 * losses[0]


def test_training_a_model_without_logits_uses_mse_to_a_fixed_target(model_file: Path) -> None:
    config = ExperimentConfig(
        model=f"{model_file}:regress", batch=4, mode="train", steps=20, threads=1, **FAST
    )
    result = run_experiment(config)
    train = result.train
    assert train is not None
    assert (train.loss_kind, train.target_shape, train.accuracy) == ("mse", (3, 5), {})
    assert not train.has_accuracy and "batch×3×5" in train.no_accuracy_reason()
    assert _falls(train.loss["plain"]) and _falls(train.loss["autocast"])
    # mse_loss is on CPU autocast's float32 list; the Linear output is the autocast dtype.
    assert train.loss_dtype == {"plain": "float32", "autocast": "float32"}
    assert train.output_dtype == {"plain": "float32", "autocast": "bfloat16"}
    assert set(train.grad_dtypes.values()) == {"float32"} and len(train.grad_dtypes) == 4
    held = train.held_out_loss
    assert set(held) == {"plain", "autocast"} and all(
        0 < v < train.loss["plain"][0] for v in held.values()
    )
    assert result.agreement is not None and result.agreement.rows == 0
    assert "not batch × classes logits" in result.agreement.no_argmax_reason
    data = result.to_dict()["train"]
    assert data["loss_kind"] == "mse" and data["target_shape"] == [3, 5]
    assert "accuracy" not in data and data["held_out_loss"]["plain"] == held["plain"]
    assert ExperimentResult.from_json(result.to_json()).train == train
    text = format_summary(result)
    assert "MSE loss" in text and "held-out MSE (16 rows)" in text
    assert "no accuracy: the output is batch×3×5, not batch × classes logits" in text
    rows = dict(training_table(compare_results([result])))
    assert rows["held-out accuracy"] == [
        f"none; held-out MSE {held['plain']:.4g} / {held['autocast']:.4g}"
    ]
    report = report_markdown(result)
    assert "| MSE loss first → last | held-out loss |" in report
    assert (
        f"MSE {held['autocast']:.4g}" in report and "No accuracy: the output is batch×3×5" in report
    )


@pytest.mark.process
@pytest.mark.parametrize(("factory", "kind"), [("regress", "mse"), ("build", "cross_entropy")])
@pytest.mark.slow
def test_reproduce_py_retrains_a_user_model_with_the_same_loss(
    model_file: Path, tmp_path: Path, factory: str, kind: str
) -> None:
    config = ExperimentConfig(
        model=f"{model_file}:{factory}", batch=4, mode="train", steps=4, threads=1, **FAST
    )
    result = run_experiment(config)
    train = result.train
    assert train is not None and train.loss_kind == kind
    write_report(result, tmp_path / "report")
    doc = reproduced(tmp_path / "report")
    found = doc["found"]
    assert doc["same"] == dict.fromkeys(
        ("loss_kind", "loss_dtype", "grad_dtypes", "saved_bytes", "first loss"), True
    )
    assert found["loss_kind"] == kind
    for mode in ("plain", "autocast"):
        assert found["loss"][mode] == pytest.approx(list(train.loss[mode]), rel=1e-5)
        assert found["held_out_loss"][mode] == pytest.approx(train.held_out_loss[mode], rel=1e-5)
    assert found["accuracy"] == pytest.approx(train.accuracy)  # {} for MSE
    script = [sys.executable, str(tmp_path / "report" / "reproduce.py"), "--min-time", "0.01"]
    text = subprocess.run(script, capture_output=True, text=True, timeout=120, check=True).stdout
    name = {"mse": "MSE", "cross_entropy": "cross-entropy"}[kind]
    assert text.startswith(
        f"Training: {model_file}:{factory}, batch 4, 4 steps, sgd lr 0.05, {name}"
    )
    score = (
        f"held-out MSE {train.held_out_loss['plain']:.4g}"
        if kind == "mse"
        else f"accuracy {100 * train.accuracy['plain']:.1f}%"
    )
    assert score in text and "same loss kind as the explorer's run: yes" in text
    assert ("no accuracy: the output is not batch x classes logits" in text) == (kind == "mse")


def test_old_training_results_read_as_cross_entropy(model_file: Path) -> None:
    config = ExperimentConfig(model=f"{model_file}:build", batch=2, mode="train", steps=1, **FAST)
    data = run_experiment(config).to_dict()
    for key in ("loss_kind", "held_out_loss"):
        del data["train"][key]
    old = ExperimentResult.from_dict(data).train
    assert old is not None and old.loss_kind == "cross_entropy" and old.held_out_loss == {}
    del data["train"]["accuracy"]
    with pytest.raises(ResultFormatError, match=r"train\.accuracy: missing"):
        ExperimentResult.from_dict(data)
    data["train"]["loss_kind"] = "mse"
    assert ExperimentResult.from_dict(data).train.accuracy == {}


# ---- Hugging Face architectures, built offline from their configs ---------------------------


def test_hf_resnet_is_a_classifier_with_bf16_convolutions() -> None:
    config = ExperimentConfig(
        model="hf:resnet", model_args=TINY_RESNET, input_image=16, batch=2, **FAST
    )
    result = run_experiment(config)
    info = result.model_info
    assert info is not None and info.class_name == "ResNetForImageClassification"
    assert info.input_shape == (3, 16, 16) and info.output_shape == (2, 2)
    convs = [layer for layer in result.layers if layer.kind == "Conv2d"]
    assert convs and {c.autocast.out_dtype for c in convs} == {"bfloat16"}
    assert {c.plain.out_dtype for c in convs} == {"float32"}
    assert result.agreement is not None and result.agreement.rows == 2
    assert len(result.layers) <= 40


def test_hf_bert_takes_tokens_and_has_no_argmax() -> None:
    config = ExperimentConfig(model="hf:bert", model_args=TINY_BERT, seq=8, batch=2, **FAST)
    result = run_experiment(config)
    info = result.model_info
    assert info is not None and info.input_kind == "tokens" and info.input_shape == (8,)
    assert info.output_shape == (2, 8, 32)
    a = result.agreement
    assert a is not None and a.rows == 0 and "not batch × classes logits" in a.no_argmax_reason
    by_name = {layer.name: layer for layer in result.layers}
    query = by_name["encoder.layer.0.attention.self.query"]
    assert (query.plain.out_dtype, query.autocast.out_dtype) == ("float32", "bfloat16")
    casts = result.op_trace.casts
    assert casts.by_source["encoder.layer.0.attention.self.query.weight"] == 1
    # query, key, value, attention out, feed-forward in and out, and the pooler
    assert casts.by_kind["Linear.weight"] == 7
    assert casts.by_source["pooler.dense.weight"] == 1
    assert "encoder.layer.0.attention.self.query.weight 1×" in format_summary(result)
    norm = by_name["encoder.layer.0.output.LayerNorm"]
    assert norm.autocast.out_dtype == "float32"  # layer_norm's float32 input: the residual add
    assert result.output_dtype_autocast == "float32"


@pytest.mark.slow
def test_hf_bert_trains_its_last_hidden_state_with_mse(tmp_path: Path) -> None:
    config = ExperimentConfig(
        model="hf:bert",
        model_args=TINY_BERT,
        seq=8,
        batch=2,
        mode="train",
        steps=12,
        threads=1,
        layer_depth=1,  # the top-level modules: embeddings, encoder, pooler
        **FAST,
    )
    result = run_experiment(config)
    train = result.train
    assert train is not None
    # the output is the model's last_hidden_state (the rule every run path reads): 8 × 32
    assert (train.loss_kind, train.target_shape) == ("mse", (8, 32))
    assert _falls(train.loss["plain"]) and _falls(train.loss["autocast"])
    assert train.loss_dtype["autocast"] == "float32"
    assert set(train.grad_dtypes.values()) == {"float32"}
    assert "encoder.layer.0.attention.self.query.weight" in train.grad_dtypes
    encoder = next(layer for layer in train.layers if layer.name == "encoder")
    assert encoder.backward["autocast"] == ("unseen", "unseen")  # it returns an output object
    assert encoder.forward["autocast"] == ("float32", "float32")  # its last_hidden_state
    embeddings = next(layer for layer in train.layers if layer.name == "embeddings")
    assert embeddings.forward["plain"] == ("int64", "float32")  # token ids, given by keyword
    # reproduce.py rebuilds hf:bert from its spec and retrains it with the same loss (the
    # pooler, which the last hidden state does not reach, gets no gradient in either).
    write_report(result, tmp_path)
    doc = reproduced(tmp_path)
    assert doc["same"] == dict.fromkeys(
        ("loss_kind", "loss_dtype", "grad_dtypes", "saved_bytes", "first loss"), True
    )
    assert doc["found"]["loss"]["autocast"] == pytest.approx(list(train.loss["autocast"]), rel=1e-5)
    assert "pooler.dense.weight" not in train.grad_dtypes


def test_a_training_step_records_the_rows_its_inference_run_shows() -> None:
    # The default depth keeps ≤ 40 rows of the module tree, for training as for inference,
    # and the training result records the model as the inference result does.
    base = dict(model="hf:bert", model_args=TINY_BERT, seq=8, batch=2, threads=1, **FAST)
    trained = run_experiment(ExperimentConfig(mode="train", steps=2, **base))
    inferred = run_experiment(ExperimentConfig(**base))
    rows = {layer.name for layer in trained.train.layers}
    assert rows == {layer.name for layer in inferred.layers}
    assert "encoder.layer.0.attention.self.query" in rows and "encoder" not in rows
    query = next(t for t in trained.train.layers if t.name.endswith("self.query"))
    assert query.forward["autocast"] == ("float32", "bfloat16")  # a Linear under autocast
    assert query.backward["autocast"][0] == "bfloat16"  # its output's gradient
    info, same = trained.model_info, inferred.model_info
    assert info is not None and info.layer_depth == same.layer_depth
    assert (info.class_name, info.parameters, info.output_shape) == (
        same.class_name,
        same.parameters,
        same.output_shape,
    )
    assert ExperimentResult.from_json(trained.to_json()).model_info == info


def test_layer_depth_groups_rows() -> None:
    config = ExperimentConfig(
        model="hf:bert", model_args=TINY_BERT, seq=4, batch=1, layer_depth=2, **FAST
    )
    result = run_experiment(config)
    names = [layer.name for layer in result.layers]
    # encoder and encoder.layer (a ModuleList) are never called with a tensor in and out, so
    # each encoder block stands for its branch; everything else is cut at depth 2.
    assert "encoder.layer.0" in names and "embeddings.LayerNorm" in names
    assert all(n.count(".") <= 1 or n == "encoder.layer.0" for n in names)
    assert result.model_info is not None and result.model_info.layer_depth == 2


def test_an_unknown_hf_type_and_a_download_are_refused() -> None:
    with pytest.raises(UserModelError, match="knows no model type 'no_such_model'"):
        probe(ExperimentConfig(model="hf:no_such_model"))


# ---- torchvision / timm: the real code path through small fake packages --------------------


def _fake_package(root: Path, name: str, body: str) -> None:
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(body))


@pytest.fixture
def fake_libraries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("torchvision", "timm"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


TINY_CLASSIFIER = """
import types
import torch

def _net(classes=3):
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(), torch.nn.Linear(4, classes))
"""


def test_timm_names_build_with_pretrained_false(fake_libraries: Path) -> None:
    _fake_package(
        fake_libraries,
        "timm",
        TINY_CLASSIFIER
        + """
CALLS = []

def create_model(name, pretrained=True, **kwargs):
    CALLS.append((name, pretrained, kwargs))
    net = _net(**kwargs)
    net.pretrained_cfg = {"input_size": (3, 12, 12)}
    return net
""",
    )
    config = ExperimentConfig(model="timm:tiny_net", model_args={"classes": 5}, batch=2, **FAST)
    result = run_experiment(config)
    import timm  # the fake, imported by the loader

    assert timm.CALLS[0] == ("tiny_net", False, {"classes": 5})
    assert result.model_info is not None and result.model_info.input_shape == (3, 12, 12)
    assert result.model_info.output_shape == (2, 5)
    with pytest.raises(UserModelError, match="would download weights"):
        probe(config.replace(model_args={"pretrained": True}))


def test_torchvision_names_build_with_weights_none(fake_libraries: Path) -> None:
    _fake_package(
        fake_libraries,
        "torchvision",
        TINY_CLASSIFIER
        + """
CALLS = []

def _get_model(name, weights="DEFAULT", **kwargs):
    CALLS.append((name, weights))
    return _net(**kwargs)

models = types.SimpleNamespace(get_model=_get_model)
""",
    )
    config = ExperimentConfig(model="torchvision:tiny", input_image=8, batch=2, **FAST)
    assert probe(config).plan.shape == (3, 8, 8)  # torchvision's 3×224×224, --image 8
    import torchvision

    assert torchvision.CALLS[0] == ("tiny", None)


def test_a_torchvision_that_fails_to_import_is_one_line(fake_libraries: Path) -> None:
    _fake_package(
        fake_libraries,
        "torchvision",
        'raise RuntimeError("operator torchvision::nms does not exist")\n',
    )
    with pytest.raises(UserModelError) as caught:
        probe(ExperimentConfig(model="torchvision:resnet18"))
    text = str(caught.value)
    assert (
        "import torchvision failed (RuntimeError: operator torchvision::nms does not exist)" in text
    )
    assert f"matching torch {torch.__version__}" in text and "\n" not in text

"""Experiment configuration: one frozen dataclass, validated on construction.

Validation lives here (not in the CLI or the window) so every front end shows the same message,
naming the field and the rule that was broken. This module must not import torch: the window
validates input while torch is still loading.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os
from dataclasses import dataclass
from typing import Any, Protocol

from autocast_explorer.core.experiment.route_kinds import reference_route, route_kinds, route_names
from autocast_explorer.core.runtime.dtypes import DTYPES
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.core.runtime.threads import validate_threads

ACTIVATIONS: tuple[str, ...] = ("relu", "gelu", "tanh", "sigmoid", "none")
HEADS: tuple[str, ...] = ("none", "softmax", "log_softmax")
INPUT_DISTRIBUTIONS: tuple[str, ...] = ("normal", "uniform")
MODES: tuple[str, ...] = ("infer", "train")
#: Where rows come from: random numbers, the bundled digits, or a file (.npz, .safetensors, .pt).
DATA_SOURCES: tuple[str, ...] = ("synthetic", "digits")
DATA_SUFFIXES: tuple[str, ...] = (".npz", ".safetensors", ".pt")
CHECKPOINT_SUFFIXES: tuple[str, ...] = (".safetensors", ".pt")
#: The fields of real data (written to JSON only when `data` is not synthetic).
DATA_FIELDS: tuple[str, ...] = ("data", "checkpoint", "epochs")
#: Epochs of float32 training on real data: the digits reach ≥ 95% held out well before this.
DEFAULT_EPOCHS = 20
MAX_EPOCHS = 10_000
#: The fields only training mode uses (sweeps and placements time forwards and ignore them).
TRAINING_FIELDS: tuple[str, ...] = ("mode", "steps", "lr", "optimizer", "scaler")
OPTIMIZERS: tuple[str, ...] = ("sgd", "adamw")
#: The routes a run measures unless asked for more: the reference alone (eager autocast). Every
#: route, its order and its words are registered in route_kinds.py.
DEFAULT_ROUTES: tuple[str, ...] = (reference_route(),)
#: A learning rate that makes the synthetic task's loss fall within the default 50 steps
#: (SGD with momentum wants a larger step than AdamW, which normalises its updates).
DEFAULT_LR: dict[str, float] = {"sgd": 0.05, "adamw": 0.001}
#: More training steps than anyone watches in a window; far beyond it is a typo.
MAX_STEPS = 100_000
MAX_LR = 100.0
#: A training step costs about three forwards: the forward, then the backward's two GEMMs per
#: layer (gradient of the input and of the weight), each the size of the forward's.
TRAINING_STEP_FORWARDS = 3
#: Without a `max_time`, a run may go on to this many times its `min_time` per mode while its
#: speedup's interval is wider than the target.
MAX_TIME_FACTOR = 4.0

#: The tutorial's closing example: Linear 256→256, ReLU, Linear 256→256, ReLU, Linear 256→10.
TUTORIAL_WIDTHS: tuple[int, ...] = (256, 256, 256, 10)
TUTORIAL_BATCH = 128

MAX_LAYERS = 64
MAX_WIDTH = 1 << 20
#: Tolerances and scales beyond this are typing slips, not experiments (and overflow float16).
MAX_TOLERANCE = 1e6
MAX_MEMORY_BUDGET_MB = float(1 << 30)


#: Model families (core/experiment/families/); "mlp" is the tutorial's model.
MODELS: tuple[str, ...] = ("mlp", "cnn", "transformer", "rnn")
#: The fields of a user model (`model` holding a spec such as "hf:bert"; families/user/), in
#: flag order; a built-in family's document leaves them out.
USER_MODEL_FIELDS: tuple[str, ...] = (
    "model_args",
    "input_shape",
    "input_kind",
    "vocab",
    "input_image",
    "layer_depth",
)
INPUT_KINDS: tuple[str, ...] = ("auto", "float", "tokens")
MAX_INPUT_DIMS = 6
MAX_MODEL_ARGS = 64
#: A `--model-arg` value: typed like Python literals (int, float, bool), a JSON list of those
#: (`depths=[1,1]`, kept as a tuple), else a string.
Scalar = bool | int | float | str
ArgValue = Scalar | tuple[Scalar, ...]
#: The config fields that belong to some family other than the MLP, in flag order.
FAMILY_FIELDS: tuple[str, ...] = (
    "channels",
    "image",
    "classes",
    "d_model",
    "heads",
    "seq",
    "depth",
    "ff",
    "fast_path",
    "cell",
    "features",
    "hidden",
)


class FamilyRules(Protocol):
    """What a config asks of its model's family: which fields are its own, the model in words,
    and the family's own validation. The families (above this module) install it on import."""

    def own_fields(self, config: ExperimentConfig) -> set[str]: ...
    def describe(self, config: ExperimentConfig) -> str: ...
    def validate(self, config: ExperimentConfig) -> None: ...


_installed_rules: list[FamilyRules] = []


def install_family_rules(rules: FamilyRules) -> None:
    """Called once by core.experiment.families (importing core.experiment imports it)."""
    _installed_rules[:] = [rules]


def family_rules() -> FamilyRules:
    """The installed family rules (core.experiment's package import installs them)."""
    if not _installed_rules:
        raise RuntimeError("core.experiment.families was not imported: no family rules")
    return _installed_rules[0]


def parse_widths(text: str, field_name: str = "widths") -> tuple[int, ...]:
    """Parse '256,256,256,10' (spaces allowed) into a tuple; raise ConfigError naming the field."""
    parts = [p.strip() for p in text.replace(";", ",").split(",")]
    example = "256,256,10" if field_name == "widths" else "3,32,64"
    if not text.strip():
        raise ConfigError(field_name, f"enter at least 2 comma-separated numbers, e.g. {example}")
    values: list[int] = []
    for part in parts:
        if not part:
            raise ConfigError(field_name, f"empty entry in {text!r}; use e.g. {example}")
        try:
            values.append(int(part))
        except ValueError:
            raise ConfigError(field_name, f"{part!r} is not a whole number") from None
    return tuple(values)


@dataclass(frozen=True)
class ExperimentConfig:
    """Everything that defines one plain-vs-autocast measurement.

    `min_time` is the measurement budget: seconds of timed forwards per mode. A run goes on
    past it until its speedup's interval is within ±5%, for at most `max_time` seconds per
    mode (None: MAX_TIME_FACTOR × `min_time`).
    `memory_budget_mb` of None means half of the RAM available when the run starts.
    `mode` "train" trains a float32 copy and an autocast copy side by side for `steps` steps
    (`optimizer`, `lr`; `scaler`: a GradScaler for float16) instead of timing forwards.
    """

    widths: tuple[int, ...] = TUTORIAL_WIDTHS
    batch: int = TUTORIAL_BATCH
    seed: int = 0
    dtype: str = "bfloat16"
    threads: int | None = None
    activation: str = "relu"
    head: str = "none"
    atol: float = 0.05
    rtol: float = 1e-5
    topk: int = 5
    input_scale: float = 1.0
    input_distribution: str = "normal"
    min_time: float = 0.5
    max_time: float | None = None
    allow_slow: bool = False
    memory_budget_mb: float | None = None
    routes: tuple[str, ...] = DEFAULT_ROUTES
    # ---- model family and its parameters (see core/experiment/families/) ----
    model: str = "mlp"
    channels: tuple[int, ...] = (3, 32, 64)
    image: int = 32
    classes: int = 10
    d_model: int = 64
    heads: int = 4
    seq: int = 32
    depth: int = 2
    ff: int = 256
    fast_path: bool = True
    cell: str = "lstm"
    features: int = 32
    hidden: int = 64
    # Real data (core/data/): "synthetic", "digits" or a file; the user's weights; epochs.
    data: str = "synthetic"
    checkpoint: str = ""
    epochs: int = DEFAULT_EPOCHS
    # ---- a user model (model = a spec, families/user/): its keyword arguments and input ----
    model_args: tuple[tuple[str, Any], ...] = ()
    input_shape: tuple[int, ...] | None = None  # per sample; None: what the model says
    input_kind: str = "auto"  # "float" tensor, "tokens" (ids < vocab), or what the model says
    vocab: int | None = None  # token ids are drawn below this; None: the model's vocab_size
    input_image: int | None = None  # square side replacing the input's last two dimensions
    layer_depth: int | None = None  # rows grouped at this module depth; None: ≤ 40 rows
    # Training mode (kept together, last).
    mode: str = "infer"
    steps: int = 50
    lr: float = DEFAULT_LR["sgd"]
    optimizer: str = "sgd"
    scaler: bool = True

    def __post_init__(self) -> None:
        channels = self.channels
        if isinstance(channels, str):
            channels = parse_widths(channels, "channels")
        if isinstance(channels, list | tuple):
            object.__setattr__(self, "channels", tuple(channels))
        widths = self.widths
        if isinstance(widths, str):
            widths = parse_widths(widths)
        try:
            widths = tuple(widths)
        except TypeError:
            raise ConfigError("widths", "must be a list of layer widths") from None
        object.__setattr__(self, "widths", widths)
        object.__setattr__(self, "model_args", normalise_model_args(self.model_args))
        shape = self.input_shape
        if isinstance(shape, str):
            shape = parse_widths(shape, "input_shape") if shape.strip() else None
        if isinstance(shape, list | tuple):
            object.__setattr__(self, "input_shape", tuple(shape))
        routes = self.routes
        if isinstance(routes, str):
            routes = tuple(r.strip() for r in routes.split(","))
        if isinstance(routes, list | tuple):
            # In registration order (eager first, the reference), whatever order they were named.
            known = route_names()
            ranked = sorted(routes, key=lambda r: known.index(r) if r in known else len(known))
            object.__setattr__(self, "routes", tuple(ranked))
        validate(self)

    def replace(self, **changes: Any) -> ExperimentConfig:
        """A copy with some fields changed (validated like any other config)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the common fields, `model`, and the family's own parameters.

        An MLP writes `widths` and every field it always has; another family writes its
        parameters instead of `widths`, so a file says only what defined its model.
        """
        own = family_rules().own_fields(self)
        user = self.is_user_model
        data: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name in FAMILY_FIELDS and f.name not in own:
                continue
            if f.name in USER_MODEL_FIELDS and not user:
                continue
            if f.name == "widths" and self.model != "mlp":
                continue
            if f.name in DATA_FIELDS and self.data == "synthetic":
                continue
            if f.name == "routes" and self.routes == DEFAULT_ROUTES:
                continue  # today's run: files stay as they were before routes existed
            data[f.name] = getattr(self, f.name)
        if "widths" in data:
            data["widths"] = list(self.widths)
        if "channels" in data:
            data["channels"] = list(self.channels)
        if user:
            data["seq"] = self.seq  # a token model's length
            data["model_args"] = {
                k: list(v) if isinstance(v, tuple) else v for k, v in self.model_args
            }
            data["input_shape"] = list(self.input_shape) if self.input_shape else None
        if "routes" in data:
            data["routes"] = list(self.routes)
        return data

    @property
    def time_limit(self) -> float:
        """Seconds per mode a run may take while narrowing its interval (`max_time` or default)."""
        return self.max_time if self.max_time is not None else MAX_TIME_FACTOR * self.min_time

    @property
    def is_user_model(self) -> bool:
        """Whether `model` is a spec of the user's own model rather than a built-in family."""
        return self.model not in MODELS

    @property
    def title(self) -> str:
        """The model in a few words: 'MLP 256,256,256,10', 'CNN 3→32→64 · image 32 · …'."""
        return family_rules().describe(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExperimentConfig:
        """Build from JSON, ignoring unknown keys so newer files still load; validates."""
        if not isinstance(data, dict):
            raise ConfigError("config", "must be a JSON object")
        lists = {"widths": "layer widths", "channels": "channel counts"}
        for key, noun in lists.items():  # text such as "3,8" is for people, not documents
            if key in data and not isinstance(data[key], list | tuple):
                raise ConfigError(key, f"must be a list of {noun}")
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    """A finite int or float (not bool, NaN or ±inf: JSON cannot store those)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def validate(config: ExperimentConfig) -> None:
    """Raise ConfigError for the first broken rule (field name + rule in the message)."""
    widths = config.widths
    if len(widths) < 2:
        raise ConfigError("widths", "needs at least 2 entries (input width and number of classes)")
    if len(widths) > MAX_LAYERS + 1:
        raise ConfigError("widths", f"at most {MAX_LAYERS + 1} entries ({MAX_LAYERS} layers)")
    for i, w in enumerate(widths):
        if not _is_int(w):
            raise ConfigError("widths", f"entry {i + 1} ({w!r}) must be a whole number")
        if w < 1:
            raise ConfigError("widths", f"entry {i + 1} ({w}) must be a positive integer")
        if w > MAX_WIDTH:
            raise ConfigError("widths", f"entry {i + 1} ({w}) must be at most {MAX_WIDTH}")
    if not _is_int(config.batch) or config.batch < 1:
        raise ConfigError("batch", f"must be an integer ≥ 1 (got {config.batch!r})")
    if not _is_int(config.seed) or not 0 <= config.seed < 2**63:
        raise ConfigError("seed", f"must be an integer in 0 … 2**63-1 (got {config.seed!r})")
    if config.dtype not in DTYPES:
        raise ConfigError("dtype", f"must be one of {', '.join(DTYPES)} (got {config.dtype!r})")
    validate_threads(config.threads)
    if config.activation not in ACTIVATIONS:
        raise ConfigError(
            "activation", f"must be one of {', '.join(ACTIVATIONS)} (got {config.activation!r})"
        )
    if config.head not in HEADS:
        raise ConfigError("head", f"must be one of {', '.join(HEADS)} (got {config.head!r})")
    for name in ("atol", "rtol"):
        value = getattr(config, name)
        if not _is_number(value) or not 0 <= value <= MAX_TOLERANCE:
            raise ConfigError(name, f"must be a number in 0 … {MAX_TOLERANCE:g} (got {value!r})")
    if not _is_int(config.topk) or config.topk < 1:
        raise ConfigError("topk", f"must be an integer ≥ 1 (got {config.topk!r})")
    if not _is_number(config.input_scale) or not 1e-6 <= config.input_scale <= 1e6:
        raise ConfigError(
            "input_scale", f"must be a number in 1e-6 … 1e6 (got {config.input_scale!r})"
        )
    if config.input_distribution not in INPUT_DISTRIBUTIONS:
        raise ConfigError(
            "input_distribution",
            f"must be one of {', '.join(INPUT_DISTRIBUTIONS)} (got {config.input_distribution!r})",
        )
    if not _is_number(config.min_time) or not 0.001 <= config.min_time <= 600:
        raise ConfigError(
            "min_time", f"must be a number of seconds in 0.001 … 600 (got {config.min_time!r})"
        )
    most = config.max_time
    if most is not None and (not _is_number(most) or not config.min_time <= most <= 3600):
        raise ConfigError(
            "max_time",
            f"must be a number of seconds in min_time ({config.min_time:g}) … 3600, or empty "
            f"(got {most!r})",
        )
    if not isinstance(config.allow_slow, bool):
        raise ConfigError("allow_slow", "must be true or false")
    budget = config.memory_budget_mb
    if budget is not None and (not _is_number(budget) or not 0 < budget <= MAX_MEMORY_BUDGET_MB):
        raise ConfigError(
            "memory_budget_mb",
            f"must be a number > 0 and ≤ {MAX_MEMORY_BUDGET_MB:g} (got {budget!r})",
        )
    if config.model not in MODELS and not (isinstance(config.model, str) and ":" in config.model):
        raise ConfigError(
            "model",
            f"{config.model!r} is not a built-in model ({', '.join(MODELS)}) nor a spec: use "
            "hf:TYPE, torchvision:NAME, timm:NAME, package.module:factory or "
            "path/to/file.py:factory",
        )
    validate_user_input(config)
    family_rules().validate(config)
    validate_data(config)
    validate_training(config)
    validate_routes(config)


def validate_routes(config: ExperimentConfig) -> None:
    """Known, distinct names, the reference among them (every route is compared with its
    float32 output); in training mode only routes that train."""
    routes, known, reference = config.routes, route_names(), reference_route()
    if not isinstance(routes, tuple) or not routes:
        raise ConfigError("routes", f"must be a list of {', '.join(known)}")
    for name in routes:
        if name not in known:
            raise ConfigError("routes", f"must be some of {', '.join(known)} (got {name!r})")
    if len(set(routes)) != len(routes):
        raise ConfigError("routes", f"each route at most once (got {', '.join(routes)})")
    if reference not in routes:
        raise ConfigError(
            "routes", f"must include {reference}: every route is compared with {reference} float32"
        )
    trained = [kind for kind in route_kinds() if kind.trains]
    if config.mode == "train" and not set(routes) <= {kind.name for kind in trained}:
        words = " and ".join(f"{kind.name} {kind.label}" for kind in trained)
        raise ConfigError("routes", f"training mode measures {words} only")


def _suffix(path: str) -> str:
    return os.path.splitext(path)[1].lower()


def validate_data(config: ExperimentConfig) -> None:
    """The data fields' rules that need no file read (the files are checked when read)."""
    data, checkpoint = config.data, config.checkpoint
    if not isinstance(data, str) or (
        data not in DATA_SOURCES and _suffix(data) not in DATA_SUFFIXES
    ):
        raise ConfigError(
            "data",
            f"must be synthetic, digits or a {', '.join(DATA_SUFFIXES)} file (got {data!r})",
        )
    if data != "synthetic" and config.model not in ("mlp", "cnn") and not config.is_user_model:
        raise ConfigError(
            "data",
            f"real data needs model mlp, cnn or your own (the {config.model} family takes no rows)",
        )
    if not isinstance(checkpoint, str) or (
        checkpoint and _suffix(checkpoint) not in CHECKPOINT_SUFFIXES
    ):
        raise ConfigError(
            "checkpoint",
            f"must be a {' or '.join(CHECKPOINT_SUFFIXES)} file of weights (got {checkpoint!r})",
        )
    if checkpoint and data == "synthetic":
        raise ConfigError("checkpoint", "needs real data to evaluate on (digits or a file)")
    if not _is_int(config.epochs) or not 1 <= config.epochs <= MAX_EPOCHS:
        raise ConfigError(
            "epochs", f"must be a whole number in 1 … {MAX_EPOCHS:,} (got {config.epochs!r})"
        )


def validate_user_input(config: ExperimentConfig) -> None:
    """The user-model fields' rules (an unset field is None: the model says)."""
    shape = config.input_shape
    if shape is not None:
        if not isinstance(shape, tuple) or not 1 <= len(shape) <= MAX_INPUT_DIMS:
            raise ConfigError(
                "input_shape", f"must be 1 … {MAX_INPUT_DIMS} sizes per sample, e.g. 3,224,224"
            )
        for size in shape:
            if not _is_int(size) or not 1 <= size <= MAX_WIDTH:
                raise ConfigError(
                    "input_shape", f"{size!r} must be a whole number in 1 … {MAX_WIDTH}"
                )
    if config.input_kind not in INPUT_KINDS:
        raise ConfigError(
            "input_kind", f"must be one of {', '.join(INPUT_KINDS)} (got {config.input_kind!r})"
        )
    for name, low in (("vocab", 2), ("input_image", 1), ("layer_depth", 1)):
        value = getattr(config, name)
        if value is not None and (not _is_int(value) or not low <= value <= MAX_WIDTH):
            raise ConfigError(
                name, f"must be a whole number in {low} … {MAX_WIDTH} (got {value!r})"
            )


def parse_value(text: str) -> ArgValue:
    """'2' → 2, '0.5' → 0.5, 'true'/'false' → bool, '[1,2]' → (1, 2), else the string."""
    if text.strip().startswith("["):
        try:
            items = json.loads(text)
        except ValueError:
            raise ConfigError("model_args", f"{text!r} is not a JSON list") from None
        if not isinstance(items, list):
            raise ConfigError("model_args", f"{text!r} is not a JSON list")
        return tuple(_scalar("list item", item) for item in items)
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            value = kind(text)
        except ValueError:
            continue
        if kind is float and (value != value or abs(value) == float("inf")):
            break
        return value
    return text


def _scalar(key: str, value: Any) -> Scalar:
    if not isinstance(value, bool | int | float | str) or (
        isinstance(value, float) and (value != value or abs(value) == float("inf"))
    ):
        raise ConfigError(
            "model_args", f"{key}: {value!r} must be a number, true/false, a string or a list"
        )
    return value


def parse_model_arg(text: str) -> tuple[str, ArgValue]:
    """'num_hidden_layers=2' → ('num_hidden_layers', 2); ConfigError for anything else."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key.isidentifier():
        raise ConfigError("model_args", f"{text!r} is not KEY=VALUE with KEY a Python name")
    return key, parse_value(value.strip())


def normalise_model_args(value: Any) -> tuple[tuple[str, ArgValue], ...]:
    """A dict, a list of pairs or of 'KEY=VALUE' strings → sorted (key, value) pairs."""
    if value is None:
        return ()
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list | tuple):
        items = [parse_model_arg(v) if isinstance(v, str) else tuple(v) for v in value]
    else:
        raise ConfigError("model_args", "must be an object of keyword arguments")
    if len(items) > MAX_MODEL_ARGS:
        raise ConfigError("model_args", f"at most {MAX_MODEL_ARGS} arguments")
    out: dict[str, ArgValue] = {}
    for item in items:
        if len(item) != 2:
            raise ConfigError("model_args", f"{item!r} is not a (key, value) pair")
        key, val = item
        if not isinstance(key, str) or not key.isidentifier():
            raise ConfigError("model_args", f"{key!r} is not a Python name")
        if isinstance(val, list | tuple):
            out[key] = tuple(_scalar(key, v) for v in val)
        else:
            out[key] = _scalar(key, val)
    return tuple(sorted(out.items()))


def validate_training(config: ExperimentConfig) -> None:
    """The training fields' rules (checked in every mode, so a saved config is always valid)."""
    if config.mode not in MODES:
        raise ConfigError("mode", f"must be one of {', '.join(MODES)} (got {config.mode!r})")
    if not _is_int(config.steps) or not 1 <= config.steps <= MAX_STEPS:
        raise ConfigError(
            "steps", f"must be a whole number in 1 … {MAX_STEPS:,} (got {config.steps!r})"
        )
    lr = config.lr
    if not _is_number(lr) or not 0 < lr <= MAX_LR:
        raise ConfigError(
            "lr", f"must be a finite number > 0 and at most {MAX_LR:g} (got {config.lr!r})"
        )
    if config.optimizer not in OPTIMIZERS:
        raise ConfigError(
            "optimizer", f"must be one of {', '.join(OPTIMIZERS)} (got {config.optimizer!r})"
        )
    if not isinstance(config.scaler, bool):
        raise ConfigError("scaler", "must be true or false")


def parameter_count(widths: tuple[int, ...]) -> int:
    """Weights and biases of the Linear layers."""
    return sum(a * b + b for a, b in itertools.pairwise(widths))


def flops_per_forward(widths: tuple[int, ...], batch: int) -> int:
    """Multiply-adds of the Linear layers counted as 2 FLOPs each (2·B·in·out per layer)."""
    return sum(2 * batch * a * b for a, b in itertools.pairwise(widths))


def flops_per_training_step(widths: tuple[int, ...], batch: int) -> int:
    """Forward, then backward: every layer's weight gradient (one more GEMM of the forward's
    size) and every layer's input gradient except the first's (the input needs none)."""
    forward = flops_per_forward(widths, batch)
    first = 2 * batch * widths[0] * widths[1] if len(widths) > 1 else 0
    return forward + forward + (forward - first)

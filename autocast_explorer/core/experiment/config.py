"""Experiment configuration: one frozen dataclass, validated on construction.

Validation lives here (not in the CLI or the window) so every front end shows the same message,
naming the field and the rule that was broken. Each field is declared once, with its part, help
sentence and rule (config_fields.py). This module must not import torch: the window validates
input while torch is still loading.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Any, Protocol

from autocast_explorer.core.experiment.config_fields import (
    Rule,
    Schema,
    boolean,
    choice,
    field_specs,
    number,
    part_fields,
    spec,
    whole,
)
from autocast_explorer.core.experiment.config_rules import (
    CHANNELS_RULE,
    CHECKPOINT_RULE,
    DATA_RULE,
    INPUT_SHAPE_RULE,
    MAX_TIME_RULE,
    MAX_WIDTH,
    WIDTHS_RULE,
)
from autocast_explorer.core.experiment.model_args import MODEL_ARGS_SCHEMA, normalise_model_args
from autocast_explorer.core.experiment.route_kinds import (
    reference_route,
    route_names,
    routes_help,
    routes_refusal,
    routes_schema,
)
from autocast_explorer.core.runtime.dtypes import DTYPES
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.core.runtime.threads import validate_threads

ACTIVATIONS: tuple[str, ...] = ("relu", "gelu", "tanh", "sigmoid", "none")
HEADS: tuple[str, ...] = ("none", "softmax", "log_softmax")
INPUT_DISTRIBUTIONS: tuple[str, ...] = ("normal", "uniform")
MODES: tuple[str, ...] = ("infer", "train")
#: Epochs of float32 training on real data: the digits reach ≥ 95% held out well before this.
DEFAULT_EPOCHS = 20
MAX_EPOCHS = 10_000
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

#: Tolerances and scales beyond this are typing slips, not experiments (and overflow float16).
MAX_TOLERANCE = 1e6
MAX_MEMORY_BUDGET_MB = float(1 << 30)
#: The RNN family's recurrent cells.
CELLS: tuple[str, ...] = ("lstm", "gru")
#: The longest spec of a user's own model (families/user/spec.py).
MAX_SPEC_LENGTH = 1000
#: A family's size (width, heads, steps): a positive whole number, at most 2**20 (a typo guard).
SIZE = whole(1, ceiling=MAX_WIDTH)

INPUT_KINDS: tuple[str, ...] = ("auto", "float", "tokens")


class FamilyRules(Protocol):
    """What a config asks of the family registry: the built-in families' names, which fields
    are a config's own, its model in words, and the family's own validation. The families
    (above this module) install it on import."""

    def names(self) -> tuple[str, ...]: ...
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


def built_in_models() -> tuple[str, ...]:
    """The registered families' names, in menu order (every other `model` is a user's spec)."""
    return family_rules().names()


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


# ---- rules that ask the family registry or another module -----------------------------------
def _threads(threads: Any, config: Any) -> str | None:
    validate_threads(threads)  # shared with the commands that take threads alone (its words)
    return None


def _model(model: Any, config: Any) -> str | None:
    if model in built_in_models() or (isinstance(model, str) and ":" in model):
        return None
    return (
        f"{model!r} is not a built-in model ({', '.join(built_in_models())}) nor a spec: use "
        "hf:TYPE, torchvision:NAME, timm:NAME, package.module:factory or path/to/file.py:factory"
    )


def _model_help() -> str:
    return (
        f"a built-in family ({', '.join(built_in_models())}; default mlp, the tutorial's model), "
        "each with its own parameters, or your own model: hf:TYPE, torchvision:NAME, timm:NAME, "
        "package.module:factory or path/to/file.py:factory (docs/models.md)"
    )


def _model_schema() -> Schema:
    return {
        "anyOf": [
            {"enum": list(built_in_models())},
            {"type": "string", "pattern": ":", "maxLength": MAX_SPEC_LENGTH},
        ]
    }


def _routes_from_text(text: str) -> tuple[str, ...]:
    """'eager,compiled' → the routes, checked by the config's rules (ConfigError naming them)."""
    return ExperimentConfig(routes=text).routes  # type: ignore[arg-type]  # the config parses "a,b"


@dataclass(frozen=True)
class ExperimentConfig:
    """Everything that defines one plain-vs-autocast measurement.

    Each field is declared once with `spec(default, part, help, rule)` (config_fields.py):
    validate(), the JSON Schema, the command line's flags, the part tables and the docs table
    all read it from there. `min_time` is the measurement budget: seconds of timed forwards per
    mode; a run goes on past it until its speedup's interval is within ±5%, for at most
    `max_time` seconds per mode. `mode` "train" trains a float32 copy and an autocast copy side
    by side for `steps` steps instead of timing forwards.
    """

    widths: tuple[int, ...] = spec(
        TUTORIAL_WIDTHS,
        "model",
        "mlp: layer widths: input, hidden…, classes",
        WIDTHS_RULE,
        text=parse_widths,
    )
    batch: int = spec(
        TUTORIAL_BATCH, "measurement", "rows per forward", whole(1, noun="an integer")
    )
    seed: int = spec(
        0,
        "measurement",
        "torch.manual_seed",
        whole(0, 2**63 - 1, noun="an integer", span="in 0 … 2**63-1"),
    )
    dtype: str = spec("bfloat16", "measurement", "autocast dtype", choice(DTYPES))
    threads: int | None = spec(
        None,
        "measurement",
        "torch threads",
        Rule(_threads, {"minimum": 1}),
        default_words="default: torch's",
    )
    activation: str = spec(
        "relu",
        "model",
        "between layers (mlp, cnn) or inside the feed-forward (transformer)",
        choice(ACTIVATIONS),
    )
    head: str = spec("none", "model", "optional output head", choice(HEADS))
    atol: float = spec(0.05, "measurement", "allclose atol", number(0, ceiling=MAX_TOLERANCE))
    rtol: float = spec(1e-5, "measurement", "allclose rtol", number(0, ceiling=MAX_TOLERANCE))
    topk: int = spec(5, "measurement", "k for top-k agreement", whole(1, noun="an integer"))
    input_scale: float = spec(
        1.0,
        "measurement",
        "multiply x by this",
        number(1e-6, 1e6, words="must be a number in 1e-6 … 1e6"),
        default_words="default 1",
    )
    input_distribution: str = spec(
        "normal", "measurement", "what the input is drawn from", choice(INPUT_DISTRIBUTIONS)
    )
    min_time: float = spec(
        0.5,
        "measurement",
        "measurement budget: seconds of timed forwards per mode",
        number(0.001, 600, words="must be a number of seconds in 0.001 … 600"),
    )
    max_time: float | None = spec(
        None,
        "measurement",
        "seconds per mode a run may go on past `min_time` while the speedup's 95% interval is "
        "wider than ±5%; a sweep point's budget is `min_time`",
        MAX_TIME_RULE,
        default_words=f"default {MAX_TIME_FACTOR:g} × `min_time`",
    )
    allow_slow: bool = spec(
        False,
        "measurement",
        "run even if one forward is estimated to take over 10 s (or, with `routes` compiled, a "
        "compile over 120 s)",
        boolean(),
        default_words="",
    )
    memory_budget_mb: float | None = spec(
        None,
        "measurement",
        "memory a run may use, in MB",
        number(
            0,
            ceiling=MAX_MEMORY_BUDGET_MB,
            above=True,
            nullable=True,
            words=f"must be a number > 0 and ≤ {MAX_MEMORY_BUDGET_MB:g}",
        ),
        default_words="default: half the RAM available when the run starts",
        flag=None,
    )
    routes: tuple[str, ...] = spec(
        DEFAULT_ROUTES,
        "measurement",
        routes_help,
        Rule(lambda routes, config: routes_refusal(routes, config.mode), routes_schema),
        default_words="",
        metavar="LIST",
        text=_routes_from_text,
    )
    model: str = spec(
        "mlp",
        "model",
        _model_help,
        Rule(_model, _model_schema),
        default_words="",
        metavar="FAMILY|SPEC",
    )
    # ---- the families' parameters (each family validates its own; core/experiment/families/)
    channels: tuple[int, ...] = spec(
        (3, 32, 64),
        "family",
        "input channels, then each stage's output channels",
        CHANNELS_RULE,
        metavar="C0,C1,…",
        text=lambda text: parse_widths(text, "channels"),
    )
    image: int = spec(32, "family", "square image side in pixels", whole(2, ceiling=MAX_WIDTH))
    classes: int = spec(10, "family", "number of classes the Linear classifier outputs", SIZE)
    d_model: int = spec(64, "family", "token width, divisible by heads", SIZE)
    heads: int = spec(4, "family", "attention heads", SIZE)
    seq: int = spec(32, "family", "tokens / time steps per sequence", SIZE)
    depth: int = spec(2, "family", "stacked layers", SIZE)
    ff: int = spec(256, "family", "feed-forward width inside each layer", SIZE)
    fast_path: bool = spec(
        True,
        "family",
        "let torch run its fused encoder kernel (eval + no_grad); off measures the ordinary "
        "path (train mode, dropout 0)",
        boolean(),
        default_words="",
    )
    cell: str = spec("lstm", "family", "recurrent cell", choice(CELLS))
    features: int = spec(32, "family", "input features per time step", SIZE)
    hidden: int = spec(64, "family", "hidden state width", SIZE)
    # ---- real data (core/data/): "synthetic", "digits" or a file; the user's weights; epochs
    data: str = spec(
        "synthetic",
        "data",
        "digits: the bundled 8×8 handwritten digits; FILE: a .npz, .safetensors or weights-only "
        ".pt with arrays x (rows, features… or images) and y (labels 0…classes−1)",
        DATA_RULE,
        default_words="default synthetic: random inputs, untrained model",
        metavar="synthetic|digits|FILE",
    )
    checkpoint: str = spec(
        "",
        "data",
        "a state_dict (.safetensors or weights-only .pt) to evaluate instead of training",
        CHECKPOINT_RULE,
        default_words="",
        metavar="FILE",
    )
    epochs: int = spec(
        DEFAULT_EPOCHS,
        "data",
        "float32 training epochs on the data's training rows",
        whole(1, MAX_EPOCHS, span=f"in 1 … {MAX_EPOCHS:,}"),
    )
    # ---- a user model (model = a spec, families/user/): its keyword arguments and input ----
    model_args: tuple[tuple[str, Any], ...] = spec(
        (),
        "user model",
        "a keyword argument for the factory or config override (repeatable; VALUE reads as "
        "int, float, true/false, a JSON list of those ([1,2]: a list for the factory, a tuple "
        "in the config), else text), e.g. num_hidden_layers=2",
        Rule(lambda value, config: None, MODEL_ARGS_SCHEMA),  # checked as __post_init__ reads it
        default_words="",
        metavar="KEY=VALUE",
        flag="--model-arg",
        repeat=True,
    )
    input_shape: tuple[int, ...] | None = spec(
        None,
        "user model",
        "one sample's shape; `batch` adds the batch dimension",
        INPUT_SHAPE_RULE,
        default_words="default: what the model says: its example input, timm's pretrained_cfg, "
        "3,224,224 for torchvision",
        metavar="C,H,W",
        text=lambda text: parse_widths(text, "input_shape"),
    )
    input_kind: str = spec(
        "auto",
        "user model",
        "float tensors or token ids",
        choice(INPUT_KINDS),
        default_words="default auto: what the model says",
    )
    vocab: int | None = spec(
        None,
        "user model",
        "token ids are drawn below this",
        whole(2, ceiling=MAX_WIDTH, nullable=True),
        default_words="default: the model's",
    )
    input_image: int | None = spec(
        None,
        "user model",
        "square side replacing the input's last two dimensions (the image flag)",
        whole(1, ceiling=MAX_WIDTH, nullable=True),
        default_words="default: the model's own",
        flag=None,
    )
    layer_depth: int | None = spec(
        None,
        "user model",
        "layer rows: the recorded modules cut at depth N of the module tree, deeper where "
        "nothing on a path down to N was recorded",
        whole(1, ceiling=MAX_WIDTH, nullable=True),
        default_words="default: the deepest with ≤ 40 rows",
        metavar="N",
    )
    # ---- training mode (kept together, last) ----
    mode: str = spec(
        "infer",
        "training",
        "infer: time forwards; train: train a float32 and an autocast copy side by side",
        choice(MODES),
    )
    steps: int = spec(
        50, "training", "training steps", whole(1, MAX_STEPS, span=f"in 1 … {MAX_STEPS:,}")
    )
    lr: float = spec(
        DEFAULT_LR["sgd"],
        "training",
        "learning rate",
        number(0, MAX_LR, above=True, words=f"must be a finite number > 0 and at most {MAX_LR:g}"),
        default_words=f"default {DEFAULT_LR['sgd']:g} for sgd, {DEFAULT_LR['adamw']:g} for adamw",
    )
    optimizer: str = spec("sgd", "training", "sgd (momentum 0.9) or adamw", choice(OPTIMIZERS))
    scaler: bool = spec(
        True,
        "training",
        "float16 training: scale the loss with a GradScaler (off: see gradients underflow)",
        boolean(),
        default_words="",
    )

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
        return self.model not in built_in_models()

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


#: The fields of each part, in field order (a built-in family's document leaves out the user
#: model's; a synthetic run's, the data's; sweeps and placements ignore training's).
FAMILY_FIELDS: tuple[str, ...] = part_fields(ExperimentConfig, "family")
USER_MODEL_FIELDS: tuple[str, ...] = part_fields(ExperimentConfig, "user model")
DATA_FIELDS: tuple[str, ...] = part_fields(ExperimentConfig, "data")
TRAINING_FIELDS: tuple[str, ...] = part_fields(ExperimentConfig, "training")


def validate(config: ExperimentConfig) -> None:
    """Raise ConfigError for the first broken rule (field name + rule in the message): every
    field's own rule in field order, then the family's (it checks its own parameters)."""
    for name, field_spec in field_specs(ExperimentConfig).items():
        if field_spec.part == "family" or field_spec.rule is None:
            continue
        refusal = field_spec.rule.refuse(getattr(config, name), config)
        if refusal is not None:
            raise ConfigError(name, refusal)
    family_rules().validate(config)


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

"""The config fields' rules that a kind (whole, number, choice; config_fields.py) cannot say:
lists with bounds, rules that read another field or ask the family registry, file suffixes,
and the parsers of typed text. Each is a Rule (its refusal words and its JSON Schema) that one
field declares in its part (config_parts.py)."""

from __future__ import annotations

import os
from typing import Any, Protocol

from autocast_explorer.core.experiment.config_fields import Rule, Schema, is_int, is_number
from autocast_explorer.core.experiment.route_kinds import routes_refusal
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.core.runtime.threads import validate_threads

MAX_LAYERS = 64
MAX_WIDTH = 1 << 20
#: The CNN family's stages (each one Conv2d, BatchNorm2d, activation, MaxPool2d) and channels.
MAX_STAGES = 16
MAX_CHANNELS = 1 << 16
MAX_INPUT_DIMS = 6
#: Where rows come from: random numbers, the bundled digits, or a file (.npz, .safetensors, .pt).
DATA_SOURCES: tuple[str, ...] = ("synthetic", "digits")
DATA_SUFFIXES: tuple[str, ...] = (".npz", ".safetensors", ".pt")
CHECKPOINT_SUFFIXES: tuple[str, ...] = (".safetensors", ".pt")
#: The longest spec of a user's own model (families/user/spec.py).
MAX_SPEC_LENGTH = 1000
#: Model files that hold pickled code, refused (docs/models.md, "Trust").
SAVED_MODEL_SUFFIXES = (
    ".pt2",
    ".pt",
    ".pth",
    ".jit",
    ".ts",
    ".bin",
    ".pkl",
    ".ckpt",
    ".safetensors",
)


class FamilyRules(Protocol):
    """What a config asks of the family registry: the built-in families' names (all, and those
    that take rows of real data), which fields are a config's own, its model in words, and the
    family's own validation. The families (above the config) install it on import; `config` is
    an ExperimentConfig (config.py, above this module)."""

    def names(self) -> tuple[str, ...]: ...
    def row_models(self) -> tuple[str, ...]: ...
    def own_fields(self, config: Any) -> set[str]: ...
    def describe(self, config: Any) -> str: ...
    def validate(self, config: Any) -> None: ...


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


def row_models() -> tuple[str, ...]:
    """The registered families that take rows of real data (`data`), in menu order."""
    return family_rules().row_models()


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
    return not_a_model(model)


def spec_usage(text: str) -> str:
    """What a model is, for `text` that is none."""
    return (
        f"{text!r} is not a built-in model ({', '.join(built_in_models())}) nor a spec: use "
        "hf:TYPE, torchvision:NAME, timm:NAME, package.module:factory or path/to/file.py:factory"
    )


def saved_model_refusal(text: str) -> str | None:
    """The line refusing a saved model file, bare (`model.pt2`) or with a factory
    (`model.pt2:build`); None for other text."""
    text = text.strip()
    if not any(p.lower().endswith(SAVED_MODEL_SUFFIXES) for p in (text, text.rpartition(":")[0])):
        return None
    return (
        f"{text!r}: saved model files (.pt2, TorchScript, pickles) are not loaded: loading "
        "them runs pickled code; give the Python factory that builds the model instead "
        "(docs/models.md, 'Trust')"
    )


def file_refusal(text: str) -> str | None:
    """Why `text` (no ':') names no model when it names a file: a saved model file, or a
    Python file without its factory; None for other text."""
    if text.strip().lower().endswith(".py"):
        return f"{text!r} names a file but not its factory: use {text.strip()}:build (FILE:factory)"
    return saved_model_refusal(text)


def not_a_model(text: Any) -> str:
    """Why `text` (no family, no ':') names no model."""
    return (isinstance(text, str) and file_refusal(text)) or spec_usage(text)


def model_help() -> str:
    """`model`'s help sentence (it lists the registered families)."""
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


def parse_routes(text: str) -> tuple[str, ...]:
    """'eager,compiled' → the routes, checked by the routes rule (ConfigError naming it); the
    config puts them in registration order."""
    routes = tuple(r.strip() for r in text.split(","))
    refusal = routes_refusal(routes, "infer")  # the mode is checked with the whole config
    if refusal is not None:
        raise ConfigError("routes", refusal)
    return routes


def _widths(widths: tuple[Any, ...], config: Any) -> str | None:
    if len(widths) < 2:
        return "needs at least 2 entries (input width and number of classes)"
    if len(widths) > MAX_LAYERS + 1:
        return f"at most {MAX_LAYERS + 1} entries ({MAX_LAYERS} layers)"
    for i, w in enumerate(widths):
        if not is_int(w):
            return f"entry {i + 1} ({w!r}) must be a whole number"
        if w < 1:
            return f"entry {i + 1} ({w}) must be a positive integer"
        if w > MAX_WIDTH:
            return f"entry {i + 1} ({w}) must be at most {MAX_WIDTH}"
    return None


def _channels(channels: tuple[Any, ...], config: Any) -> str | None:
    if len(channels) < 2:
        return (
            "needs the input channels and at least one stage's channels, e.g. 3,32,64 "
            f"(got {len(channels)} entry)"
        )
    if len(channels) > MAX_STAGES + 1:
        return f"at most {MAX_STAGES + 1} entries ({MAX_STAGES} stages)"
    for i, c in enumerate(channels):
        if not is_int(c) or not 1 <= c <= MAX_CHANNELS:
            return f"entry {i + 1} ({c!r}) must be a whole number in 1 … {MAX_CHANNELS}"
    return None


def _max_time(most: Any, config: Any) -> str | None:
    if most is None or (is_number(most) and config.min_time <= most <= 3600):
        return None
    return (
        f"must be a number of seconds in min_time ({config.min_time:g}) … 3600, or empty "
        f"(got {most!r})"
    )


def _suffix(path: str) -> str:
    return os.path.splitext(path)[1].lower()


def data_source_refusal(data: Any) -> str | None:
    """The `data` rule's first half, checked without reading a file (the files are checked when
    read); the second, which families take rows, is the config's (it asks the registry)."""
    if not isinstance(data, str) or (
        data not in DATA_SOURCES and _suffix(data) not in DATA_SUFFIXES
    ):
        return f"must be synthetic, digits or a {', '.join(DATA_SUFFIXES)} file (got {data!r})"
    return None


def _data(data: Any, config: Any) -> str | None:
    """A source or file of rows, for a family that takes rows (or the user's own model)."""
    refusal = data_source_refusal(data)
    if refusal or data == "synthetic" or config.is_user_model or config.model in row_models():
        return refusal
    return (
        f"real data needs model {', '.join(row_models())} or your own (the {config.model} "
        "family takes no rows)"
    )


def _checkpoint(checkpoint: Any, config: Any) -> str | None:
    if not isinstance(checkpoint, str) or (
        checkpoint and _suffix(checkpoint) not in CHECKPOINT_SUFFIXES
    ):
        return f"must be a {' or '.join(CHECKPOINT_SUFFIXES)} file of weights (got {checkpoint!r})"
    if checkpoint and config.data == "synthetic":
        return "needs real data to evaluate on (digits or a file)"
    return None


def _input_shape(shape: Any, config: Any) -> str | None:
    """An unset shape is None: the model says."""
    if shape is None:
        return None
    if not isinstance(shape, tuple) or not 1 <= len(shape) <= MAX_INPUT_DIMS:
        return f"must be 1 … {MAX_INPUT_DIMS} sizes per sample, e.g. 3,224,224"
    for size in shape:
        if not is_int(size) or not 1 <= size <= MAX_WIDTH:
            return f"{size!r} must be a whole number in 1 … {MAX_WIDTH}"
    return None


INPUT_SHAPE_SCHEMA: dict[str, Any] = {
    "type": ["array", "null"],
    "items": {"type": "integer", "minimum": 1, "maximum": MAX_WIDTH},
    "minItems": 1,
    "maxItems": MAX_INPUT_DIMS,
}


WIDTHS_RULE = Rule(
    _widths,
    {
        "items": {"type": "integer", "minimum": 1, "maximum": MAX_WIDTH},
        "minItems": 2,
        "maxItems": MAX_LAYERS + 1,
    },
)
CHANNELS_RULE = Rule(
    _channels,
    {"items": {"type": "integer", "minimum": 1}, "minItems": 2, "maxItems": MAX_STAGES + 1},
)
MAX_TIME_RULE = Rule(_max_time, {"type": ["number", "null"], "maximum": 3600})
DATA_RULE = Rule(_data, {"type": "string"})
CHECKPOINT_RULE = Rule(_checkpoint, {"type": "string"})
INPUT_SHAPE_RULE = Rule(_input_shape, INPUT_SHAPE_SCHEMA)
THREADS_RULE = Rule(_threads, {"minimum": 1})
MODEL_RULE = Rule(_model, _model_schema)

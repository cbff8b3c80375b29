"""The config fields' rules that a kind (whole, number, choice; config_fields.py) cannot say:
lists with bounds, rules that read another field, file suffixes. Each is a Rule (its refusal
words and its JSON Schema) that one field of ExperimentConfig declares (config.py)."""

from __future__ import annotations

import os
from typing import Any

from autocast_explorer.core.experiment.config_fields import Rule, is_int, is_number

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
CHECKPOINT_RULE = Rule(_checkpoint, {"type": "string"})
INPUT_SHAPE_RULE = Rule(_input_shape, INPUT_SHAPE_SCHEMA)

"""A user model's keyword arguments (`--model-arg KEY=VALUE`, the `model_args` field): parsed
and normalised into sorted (key, value) pairs of JSON scalars, without torch."""

from __future__ import annotations

import json
from typing import Any

from autocast_explorer.core.runtime.errors import ConfigError

MAX_MODEL_ARGS = 64
#: A `--model-arg` value: typed like Python literals (int, float, bool), a JSON list of those
#: (`depths=[1,1]`, kept as a tuple), else a string.
Scalar = bool | int | float | str
ArgValue = Scalar | tuple[Scalar, ...]
#: The field's JSON Schema: an object of such values.
MODEL_ARGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": {
        "anyOf": [
            {"type": ["number", "boolean", "string"]},
            {"type": "array", "items": {"type": ["number", "boolean", "string"]}},
        ]
    },
}


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

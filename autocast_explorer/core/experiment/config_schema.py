"""The JSON Schema of ExperimentConfig, for the published document schemas.

The config is read by ExperimentConfig.from_dict (its own validate(): ranges, family rules), not
by a document model; its schema is made here from the dataclass's fields (the type from each
annotation) plus the rules validate() enforces, so a new field is in the schemas as soon as
tools/write_schemas.py reruns (tests/core/test_schemas.py checks the field sets agree).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from autocast_explorer.core.experiment.config import (
    ACTIVATIONS,
    HEADS,
    INPUT_DISTRIBUTIONS,
    INPUT_KINDS,
    MAX_EPOCHS,
    MAX_INPUT_DIMS,
    MAX_LAYERS,
    MAX_LR,
    MAX_STEPS,
    MAX_WIDTH,
    MODELS,
    MODES,
    OPTIMIZERS,
    ExperimentConfig,
)
from autocast_explorer.core.experiment.families.cnn import MAX_STAGES
from autocast_explorer.core.experiment.families.rnn import CELLS
from autocast_explorer.core.experiment.families.user.spec import MAX_SPEC_LENGTH
from autocast_explorer.core.experiment.route_kinds import reference_route, route_names
from autocast_explorer.core.runtime.dtypes import DTYPES

Schema = dict[str, Any]


#: Schemas for the Python types ExperimentConfig's fields are annotated with.
FIELD_TYPES: dict[str, Schema] = {
    "int": {"type": "integer"},
    "int | None": {"type": ["integer", "null"]},
    "float": {"type": "number"},
    "float | None": {"type": ["number", "null"]},
    "bool": {"type": "boolean"},
    "str": {"type": "string"},
    "str | None": {"type": ["string", "null"]},
    "tuple[int, ...]": {"type": "array", "items": {"type": "integer"}},
}

#: The rules ExperimentConfig's validate() enforces, field by field (the type comes from the
#: field's annotation, so a new field is in the schemas as soon as this script reruns).
CONFIG_RULES: dict[str, Schema] = {
    "widths": {
        "description": "layer widths: input, hidden…, classes",
        "items": {"type": "integer", "minimum": 1, "maximum": MAX_WIDTH},
        "minItems": 2,
        "maxItems": MAX_LAYERS + 1,
    },
    "batch": {"description": "rows per forward", "minimum": 1},
    "seed": {"minimum": 0, "maximum": 2**63 - 1},
    "dtype": {"description": "the autocast dtype", "enum": list(DTYPES)},
    "threads": {"description": "null: torch's own", "minimum": 1},
    "activation": {"enum": list(ACTIVATIONS)},
    "head": {"enum": list(HEADS)},
    "atol": {"minimum": 0},
    "rtol": {"minimum": 0},
    "topk": {"minimum": 1},
    "input_scale": {"minimum": 1e-6, "maximum": 1e6},
    "input_distribution": {"enum": list(INPUT_DISTRIBUTIONS)},
    "min_time": {
        "description": "seconds of timed forwards per mode",
        "minimum": 0.001,
        "maximum": 600,
    },
    "max_time": {
        "description": "seconds per mode a run may go on past min_time while the speedup's "
        "interval is wider than ±5% (at least min_time); null: 4 × min_time",
        "type": ["number", "null"],
        "maximum": 3600,
    },
    "memory_budget_mb": {
        "description": "null: half the RAM available when the run starts",
        "exclusiveMinimum": 0,
    },
    "model": {
        "description": "a model family, or your own model's spec (hf:TYPE, torchvision:NAME, "
        "timm:NAME, package.module:factory, path/to/file.py:factory); absent in files written "
        "before families: mlp",
        "anyOf": [
            {"enum": list(MODELS)},
            {"type": "string", "pattern": ":", "maxLength": MAX_SPEC_LENGTH},
        ],
    },
    "model_args": {
        "description": "your own model: keyword arguments of its factory or config overrides",
        "type": "object",
        "additionalProperties": {
            "anyOf": [
                {"type": ["number", "boolean", "string"]},
                {"type": "array", "items": {"type": ["number", "boolean", "string"]}},
            ]
        },
    },
    "input_shape": {
        "description": "your own model: one sample's shape (null: what the model says)",
        "type": ["array", "null"],
        "items": {"type": "integer", "minimum": 1, "maximum": MAX_WIDTH},
        "minItems": 1,
        "maxItems": MAX_INPUT_DIMS,
    },
    "input_kind": {
        "description": "your own model: float tensors or token ids (auto: what the model says)",
        "enum": list(INPUT_KINDS),
    },
    "vocab": {"description": "your own model: token ids are drawn below this", "minimum": 2},
    "input_image": {
        "description": "your own model: square side replacing the input's last two sizes",
        "minimum": 1,
    },
    "layer_depth": {
        "description": "your own model: layer rows at this module depth (null: ≤ 40 rows)",
        "minimum": 1,
    },
    "channels": {
        "description": "cnn: input channels, then each stage's",
        "items": {"type": "integer", "minimum": 1},
        "minItems": 2,
        "maxItems": MAX_STAGES + 1,
    },
    "image": {"description": "cnn: square image side", "minimum": 2},
    "classes": {"description": "cnn, transformer, rnn: outputs of the classifier", "minimum": 1},
    "d_model": {"description": "transformer: token width (divisible by heads)", "minimum": 1},
    "heads": {"description": "transformer: attention heads", "minimum": 1},
    "seq": {"description": "transformer, rnn, your token model: tokens / time steps", "minimum": 1},
    "depth": {"description": "transformer, rnn: stacked layers", "minimum": 1},
    "ff": {"description": "transformer: feed-forward width", "minimum": 1},
    "fast_path": {"description": "transformer: allow the fused encoder kernel"},
    "cell": {"description": "rnn: recurrent cell", "enum": list(CELLS)},
    "features": {"description": "rnn: input features per step", "minimum": 1},
    "hidden": {"description": "rnn: hidden state width", "minimum": 1},
    "data": {
        "description": "where rows come from: synthetic (random), digits (bundled), or a "
        ".npz / .safetensors / .pt file of arrays x and y; absent: synthetic",
        "type": "string",
    },
    "checkpoint": {
        "description": "real data: a state_dict file evaluated instead of training ('' none)",
        "type": "string",
    },
    "epochs": {
        "description": "real data: float32 training epochs",
        "minimum": 1,
        "maximum": MAX_EPOCHS,
    },
    "mode": {
        "description": "infer: time forwards; train: train a float32 and an autocast copy",
        "enum": list(MODES),
    },
    "steps": {"description": "training steps per copy", "minimum": 1, "maximum": MAX_STEPS},
    "lr": {"description": "learning rate", "exclusiveMinimum": 0, "maximum": MAX_LR},
    "optimizer": {"description": "sgd (momentum 0.9) or adamw", "enum": list(OPTIMIZERS)},
    "scaler": {"description": "float16 training: use torch.amp.GradScaler('cpu')"},
}


def routes_rule() -> Schema:
    """The `routes` field's rule, from the route registry as it is when the schema is made."""
    reference = reference_route()
    return {
        "description": f"ways to a lower precision measured ({reference} among them); "
        f"absent: {reference}",
        "type": "array",
        "items": {"enum": list(route_names())},
        "minItems": 1,
        "uniqueItems": True,
    }


def config_properties() -> dict[str, Schema]:
    """ExperimentConfig's fields: the annotation's type plus the field's rules."""
    properties = {}
    for field in dataclasses.fields(ExperimentConfig):
        annotation = field.type if isinstance(field.type, str) else field.type.__name__
        base = FIELD_TYPES.get(annotation, {})
        rules = routes_rule() if field.name == "routes" else CONFIG_RULES.get(field.name, {})
        if not base and not {"type", "enum"} & set(rules):
            raise ValueError(
                f"config field {field.name!r}: no schema for {annotation!r}; add it to "
                "FIELD_TYPES or give the field a type or enum in CONFIG_RULES"
            )
        if "enum" in rules:
            base = {}  # the enum says it all (and a nullable one lists None itself)
        properties[field.name] = base | rules
    return properties


def config_schema(closed: bool) -> Schema:
    """Missing fields take their defaults; documents may carry newer fields, presets may not."""
    data: Schema = {
        "description": "the experiment config",
        "type": "object",
        "properties": config_properties(),
    }
    if closed:
        data["additionalProperties"] = False
    return data

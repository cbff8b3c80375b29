"""Write the published JSON Schemas (draft 2020-12) into resources/schemas/.

The schemas are package data that other tools read, so they are plain JSON files; this script is
where they are edited, because the four documents share their config, environment and latency
parts. Each schema is self-contained (its shared parts copied into `$defs`) so a consumer needs
one file, no registry. The rules are the readers' rules (core/documents and friends): integers
where the readers want whole numbers, bounds where ExperimentConfig validates them, `null` only
where a reader accepts it (a value that is not finite is written `null`; JSON has no NaN).

    python tools/write_schemas.py           # rewrite the files
    python tools/write_schemas.py --check   # exit 1 if a file differs (the test suite runs this)
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout's package, also when run as a plain script

from autocast_explorer.core.experiment.config import (  # noqa: E402  (after the path)
    ACTIVATIONS,
    DTYPES,
    HEADS,
    INPUT_DISTRIBUTIONS,
    MAX_LAYERS,
    MAX_LR,
    MAX_STEPS,
    MAX_WIDTH,
    MODELS,
    MODES,
    OPTIMIZERS,
    ExperimentConfig,
)
from autocast_explorer.core.experiment.families.cnn import MAX_STAGES  # noqa: E402
from autocast_explorer.core.experiment.families.rnn import CELLS  # noqa: E402
from autocast_explorer.core.sweeps.spec import PARAMS  # noqa: E402

DRAFT = "https://json-schema.org/draft/2020-12/schema"
OUT = ROOT / "resources" / "schemas"

Schema = dict[str, Any]


def number(description: str = "", minimum: float | None = None) -> Schema:
    data: Schema = {"type": "number"}
    if minimum is not None:
        data["minimum"] = minimum
    return _describe(data, description)


def nullable_number(description: str = "") -> Schema:
    return _describe({"type": ["number", "null"]}, description)


def integer(minimum: int | None = 0, description: str = "") -> Schema:
    data: Schema = {"type": "integer"}
    if minimum is not None:
        data["minimum"] = minimum
    return _describe(data, description)


def text(description: str = "") -> Schema:
    return _describe({"type": "string"}, description)


def boolean(description: str = "") -> Schema:
    return _describe({"type": "boolean"}, description)


def array(items: Schema, description: str = "", **extra: Any) -> Schema:
    return _describe({"type": "array", "items": items, **extra}, description)


def obj(
    properties: dict[str, Schema],
    required: list[str] | tuple[str, ...] = (),
    closed: bool = False,
    description: str = "",
) -> Schema:
    """An object; `closed` refuses unknown keys (presets), open objects let newer files load."""
    data: Schema = {"type": "object", "properties": properties}
    if required:
        data["required"] = list(required)
    if closed:
        data["additionalProperties"] = False
    return _describe(data, description)


def counts_by_name(description: str = "") -> Schema:
    return _describe({"type": "object", "additionalProperties": integer()}, description)


def ref(name: str) -> Schema:
    return {"$ref": f"#/$defs/{name}"}


def _describe(data: Schema, description: str) -> Schema:
    return {"description": description, **data} if description else data


# ---- shared parts --------------------------------------------------------------------------
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
        "description": "model family; absent in files written before families: mlp",
        "enum": list(MODELS),
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
    "seq": {"description": "transformer, rnn: tokens / time steps", "minimum": 1},
    "depth": {"description": "transformer, rnn: stacked layers", "minimum": 1},
    "ff": {"description": "transformer: feed-forward width", "minimum": 1},
    "fast_path": {"description": "transformer: allow the fused encoder kernel"},
    "cell": {"description": "rnn: recurrent cell", "enum": list(CELLS)},
    "features": {"description": "rnn: input features per step", "minimum": 1},
    "hidden": {"description": "rnn: hidden state width", "minimum": 1},
    "mode": {
        "description": "infer: time forwards; train: train a float32 and an autocast copy",
        "enum": list(MODES),
    },
    "steps": {"description": "training steps per copy", "minimum": 1, "maximum": MAX_STEPS},
    "lr": {"description": "learning rate", "exclusiveMinimum": 0, "maximum": MAX_LR},
    "optimizer": {"description": "sgd (momentum 0.9) or adamw", "enum": list(OPTIMIZERS)},
    "scaler": {"description": "float16 training: use torch.amp.GradScaler('cpu')"},
}


def config_properties() -> dict[str, Schema]:
    """ExperimentConfig's fields: the annotation's type plus the field's rules."""
    properties = {}
    for field in dataclasses.fields(ExperimentConfig):
        annotation = field.type if isinstance(field.type, str) else field.type.__name__
        base = FIELD_TYPES.get(annotation, {})
        rules = CONFIG_RULES.get(field.name, {})
        if not base and not {"type", "enum"} & set(rules):
            raise ValueError(
                f"config field {field.name!r}: no schema for {annotation!r}; add it to "
                "FIELD_TYPES or give the field a type or enum in CONFIG_RULES"
            )
        if "enum" in rules:
            base = {}  # the enum says it all (and a nullable one lists None itself)
        properties[field.name] = base | rules
    return properties


def config(closed: bool) -> Schema:
    """Missing fields take their defaults; documents may carry newer fields, presets may not."""
    return obj(config_properties(), closed=closed, description="the experiment config")


ENVIRONMENT = obj(
    {
        "torch_version": text(),
        "python": text(),
        "os": text(),
        "cpu_model": text(),
        "cpu_capability": text("torch.backends.cpu.get_cpu_capability()"),
        "cpu_flags": array(text()),
        "native_bf16": boolean(),
        "native_fp16": boolean(),
        "torch_bf16_supported": {"type": ["boolean", "null"]},
        "torch_fp16_supported": {"type": ["boolean", "null"]},
        "mkldnn": boolean(),
        "cores": integer(0),
        "threads": integer(0),
        "extra": {"type": "object"},
    },
    description="the machine and torch the document was measured with",
)

LATENCY = obj(
    {
        "median_ms": number("median per-call time of the timed blocks", 0),
        "p25_ms": number(minimum=0),
        "p75_ms": number(minimum=0),
        "iqr_ms": number(minimum=0),
        "samples": integer(0, "timed blocks"),
        "cold_ms": number("the first call, timed on its own", 0),
        "block_size": integer(1, "calls per timed block"),
        "gflops": number(minimum=0),
        "times_ms": array(number(minimum=0), "each block's per-call time"),
    },
    required=["median_ms", "p25_ms", "p75_ms", "iqr_ms", "samples", "cold_ms"],
    description="latency statistics of one mode",
)


#: Keys the paired timing adds to a `latency` object (result and sweep point); all optional,
#: absent in files written before intervals.
EVIDENCE: dict[str, Schema] = {
    "speedup_interval": {
        "description": "interval of the median of paired blocks' speedups (order statistics); "
        "null: fewer than 2 pairs",
        "anyOf": [
            {"type": "null"},
            obj(
                {
                    "low": number(minimum=0),
                    "high": number(minimum=0),
                    "level": number("coverage (0.95, less with under 6 pairs)", 0),
                    "pairs": integer(0, "paired rounds the interval is built from"),
                },
                ["low", "high", "level"],
            ),
        ],
    },
    "stalls": array(
        obj(
            {
                "mode": text(),
                "round": integer(0),
                "ms": number("the stalled block's per-call time", 0),
                "median_ms": number("its mode's median of the blocks kept before it", 0),
            },
            ["mode", "round", "ms", "median_ms"],
        ),
        "blocks over 2× their mode's running median: left out of the statistics, re-measured",
    ),
    "load": {
        "description": "the machine during timing; null fields: not readable on this OS",
        "anyOf": [
            {"type": "null"},
            obj(
                {
                    "wall_s": number(minimum=0),
                    "cores": integer(1),
                    "other_cpu_s": nullable_number("CPU seconds other processes used"),
                    "freq_start_mhz": {"type": ["array", "null"], "items": number(minimum=0)},
                    "freq_end_mhz": {"type": ["array", "null"], "items": number(minimum=0)},
                },
                ["wall_s", "cores"],
            ),
        ],
    },
    "stopped": {"enum": ["budget", "precise", "max_time"]},
    "target": nullable_number("the interval's relative half-width aimed at (null: none)"),
    "blocks": integer(0, "timed blocks kept, all modes"),
}


def document_defs(*names: str) -> dict[str, Schema]:
    parts = {"config": config(closed=False), "environment": ENVIRONMENT, "latency": LATENCY}
    return {name: parts[name] for name in names}


def document(tag: str, title: str, description: str) -> Schema:
    return {
        "$schema": DRAFT,
        "$id": f"urn:{tag.replace('/', ':')}",
        "title": title,
        "description": description,
    }


# ---- result ----------------------------------------------------------------------------
def result_schema() -> Schema:
    dtypes = obj({"in": text(), "out": text()}, ["in", "out"])
    layer_error = obj(
        {
            "max_abs": nullable_number(),
            "mean_abs": nullable_number(),
            "mean_rel": nullable_number("mean|ref−low| ÷ mean|ref|"),
            "sqnr_db": nullable_number("null when not finite (identical: +∞)"),
            "cosine": nullable_number(),
            "identical": boolean(),
            "numel": integer(0),
            "nonfinite": integer(0),
        },
        description="the layer's autocast output against its float32 output",
    )
    agreement = obj(
        {
            "rows": integer(0),
            "agree": integer(0),
            "fraction": number(minimum=0),
            "max_abs_diff": nullable_number(),
            "mean_abs_diff": nullable_number(),
            "allclose": boolean(),
            "atol": number(minimum=0),
            "rtol": number(minimum=0),
            "cosine": nullable_number(),
            "histogram": obj(
                {"edges": array(number()), "counts": array(integer(0))}, ["edges", "counts"]
            ),
            "topk": obj(
                {
                    "k": integer(1),
                    "contains": integer(0),
                    "fraction": number(minimum=0),
                    "overlap": number(minimum=0),
                },
                ["k", "contains", "fraction", "overlap"],
            ),
            "flips": array(
                obj(
                    {
                        "row": integer(0),
                        "plain": integer(0, "float32's predicted class"),
                        "autocast": integer(0, "autocast's predicted class"),
                        "margin": nullable_number("float32 top-1 − top-2 logit"),
                    },
                    ["row", "plain", "autocast", "margin"],
                )
            ),
            "flip_rate_by_margin": array(
                obj(
                    {
                        "low": nullable_number(),
                        "high": nullable_number(),
                        "rows": integer(0),
                        "flips": integer(0),
                        "rate": number(minimum=0),
                    },
                    ["low", "high", "rows", "flips"],
                )
            ),
        },
        [
            "rows",
            "agree",
            "fraction",
            "max_abs_diff",
            "mean_abs_diff",
            "allclose",
            "atol",
            "cosine",
            "histogram",
        ],
    )
    cast_summary = obj(
        {
            "count": integer(0),
            "bytes": integer(0, "bytes of the low-precision copies written"),
            "bytes_read": integer(0),
            "by_op": counts_by_name(),
            "by_source": counts_by_name(
                "casts of model parameters by what they convert, e.g. Conv2d.weight"
            ),
        },
        ["count", "bytes"],
    )
    op_record = obj(
        {
            "mode": {"enum": ["plain", "autocast"]},
            "op": text("aten op, e.g. aten.addmm.default"),
            "in": array(text()),
            "out": array(text()),
            "shape": array(integer(0)),
            "in_shapes": array(array(integer(0))),
            "cast": boolean(),
            "bytes": integer(0),
            "bytes_read": integer(0),
            "source": text("for a cast of a model parameter: what it converted"),
        },
        ["mode", "op", "in", "out", "shape", "cast"],
    )
    placement = obj(
        {
            "median_ms": number("equals latency.median_ms", 0),
            "casts_per_forward": integer(0),
            "cast_bytes": integer(0),
            "one_time_casts": integer(0),
            "one_time_cast_bytes": integer(0),
            "cast_ops": counts_by_name(),
            "cast_sources": counts_by_name("per-forward casts of model parameters"),
            "latency": ref("latency"),
        },
        [
            "median_ms",
            "casts_per_forward",
            "cast_bytes",
            "one_time_casts",
            "one_time_cast_bytes",
            "cast_ops",
            "latency",
        ],
    )
    return {
        **document(
            "autocast-explorer/result/1",
            "Autocast Explorer result",
            "One config measured in float32 and under torch.autocast('cpu'): written by "
            "`autocast-explorer run --json`, the window's File › Save and experimentFinished. "
            "Readers ignore keys they do not know.",
        ),
        "type": "object",
        "required": [
            "schema",
            "config",
            "environment",
            "latency",
            "flops_per_forward",
            "output_dtype",
            "layers",
            "agreement",
        ],
        "properties": {
            "schema": {"const": "autocast-explorer/result/1"},
            "created": text("ISO 8601 UTC time"),
            "config": ref("config"),
            "environment": ref("environment"),
            "latency": obj(
                {
                    "plain": ref("latency"),
                    "autocast": {
                        "anyOf": [ref("latency"), {"type": "null"}],
                        "description": "null when the autocast forward raised (autocast_error)",
                    },
                    "speedup": nullable_number("plain median ÷ autocast median"),
                    **EVIDENCE,
                },
                ["plain", "autocast"],
            ),
            "flops_per_forward": integer(
                0, "2 per multiply-add of the model's matrix products (Linear layers for an MLP)"
            ),
            "output_dtype": obj(
                {"plain": text(), "autocast": {"type": ["string", "null"]}},
                ["plain", "autocast"],
            ),
            "autocast_error": text(
                "only when the autocast forward raised: torch's message (float32 alone was timed)"
            ),
            "fast_path": {
                "description": "transformer: whether the fused encoder kernel ran, per mode",
                "type": "object",
                "additionalProperties": {"type": "boolean"},
            },
            "layers": array(
                obj(
                    {
                        "name": text(),
                        "kind": text(),
                        "out_shape": array(integer(0)),
                        "plain": dtypes,
                        "autocast": {
                            "anyOf": [dtypes, {"type": "null"}],
                            "description": "null: the autocast forward raised before this layer",
                        },
                        "error": layer_error,
                    },
                    ["name", "kind", "plain", "autocast"],
                )
            ),
            "agreement": {
                "anyOf": [agreement, {"type": "null"}],
                "description": "null when the autocast forward raised",
            },
            "warnings": array(text()),
            "ops": array(op_record, "the aten ops of one forward per mode"),
            "casts": cast_summary
            | {"properties": cast_summary["properties"] | {"grad_mode": text()}},
            "ops_diff": array(
                obj(
                    {
                        "op": text(),
                        "plain": integer(0),
                        "autocast": integer(0),
                        "added": integer(None),
                    },
                    ["op", "plain", "autocast"],
                )
            ),
            "casts_by_grad_mode": {"type": "object", "additionalProperties": cast_summary},
            "train": train_schema(),
            "guard": obj(
                {
                    "estimated_forward_ms": number("the time guard's forecast of one forward", 0),
                    "basis": text("what was calibrated to make it"),
                },
                ["estimated_forward_ms", "basis"],
                description="the time guard's estimate, beside the measurement",
            ),
            "placements": obj(
                {
                    "dtype": text(),
                    "per_call": placement,
                    "hoisted": placement,
                    "pre_cast": placement,
                    "float32": ref("latency"),
                    "explanation": text(),
                },
                ["dtype", "per_call", "hoisted", "pre_cast", "float32", "explanation"],
                description="run --placements: where autocast is entered",
            ),
        },
        "dependentRequired": {"ops": ["casts"]},
        "$defs": document_defs("config", "environment", "latency"),
    }


def train_schema() -> Schema:
    """The `train` object of a training run (core/experiment/training.py, TrainReport)."""
    modes = ("plain", "autocast")

    def per_mode(item: Schema) -> Schema:
        return obj({m: item for m in modes}, modes)

    dtype_map = {"type": "object", "additionalProperties": text()}
    pair = obj({"in": text(), "out": text()}, ["in", "out"])
    grads = obj({"grad_out": text(), "grad_in": text()}, ["grad_out", "grad_in"])
    op_use = obj(
        {"op": text(), "in": array(text()), "out": array(text()), "count": integer(0)},
        ["op", "count"],
    )
    phases = obj(
        {
            "forward_ms": number(minimum=0),
            "backward_ms": number(minimum=0),
            "optimizer_ms": number(minimum=0),
        },
        ["forward_ms", "backward_ms", "optimizer_ms"],
    )
    scaler = obj(
        {
            "used": boolean(),
            "enabled": boolean(),
            "init_scale": nullable_number(),
            "final_scale": nullable_number(),
            "skipped_steps": integer(0),
            "underflowed_grads": integer(
                0, "gradient elements zero under autocast but not in float32, first step"
            ),
            "grad_elements": integer(0),
        },
        ["used", "enabled", "skipped_steps", "underflowed_grads", "grad_elements"],
    )
    return obj(
        {
            "steps": integer(1),
            "loss": per_mode(array(nullable_number(), "the loss of every step")),
            "accuracy": per_mode(number(minimum=0)),
            "held_out_rows": integer(0),
            "loss_dtype": per_mode(text()),
            "output_dtype": per_mode(text()),
            "grad_dtypes": dtype_map | {"description": "parameter → gradient dtype (autocast)"},
            "grad_dtypes_plain": dtype_map,
            "saved_bytes": per_mode(integer(0, "bytes packed by saved_tensors_hooks")),
            "saved_tensors": per_mode(integer(0)),
            "layers": array(
                obj(
                    {
                        "name": text(),
                        "kind": text(),
                        "forward": per_mode(pair),
                        "backward": per_mode(grads),
                    },
                    ["name", "kind", "forward", "backward"],
                )
            ),
            "ops": {
                "type": "object",
                "additionalProperties": {"type": "object", "additionalProperties": array(op_use)},
            },
            "phases": {"type": "object", "additionalProperties": phases},
            "scaler": scaler,
            "nonfinite_steps": {"type": "object", "additionalProperties": integer(0)},
        },
        [
            "steps",
            "loss",
            "accuracy",
            "held_out_rows",
            "loss_dtype",
            "output_dtype",
            "grad_dtypes",
            "grad_dtypes_plain",
            "saved_bytes",
            "saved_tensors",
            "layers",
            "ops",
            "phases",
            "scaler",
        ],
        description="training mode: both copies' losses, dtypes, saved bytes and the scaler",
    )


# ---- sweep -----------------------------------------------------------------------------
def sweep_schema() -> Schema:
    whole = integer(1)
    pair = obj({"plain": number(minimum=0), "autocast": number(minimum=0)}, ["plain", "autocast"])
    point = obj(
        {
            "index": integer(0),
            "value": whole,
            "width": integer(1, "grid only: the row's hidden width"),
            "batch": whole,
            "widths": array(whole, minItems=2, description="mlp points"),
            "latency": obj(
                {
                    "plain": ref("latency"),
                    "autocast": ref("latency"),
                    "speedup": nullable_number(),
                    **EVIDENCE,
                },
                ["plain", "autocast", "speedup"],
            ),
            "gflops": pair,
            "flops": integer(0),
            "bytes": obj({"plain": integer(0), "autocast": integer(0)}),
            "intensity": obj({"plain": number(minimum=0), "autocast": number(minimum=0)}),
        },
        ["index", "value", "batch", "latency", "gflops"],
    )
    kernel = obj(
        {
            "primitive": text(),
            "implementation": text(),
            "src_dtype": text(),
            "problem": text(),
        },
        ["primitive", "implementation", "src_dtype", "problem"],
    )
    onednn = obj(
        {
            "dtype": text(),
            "available": boolean(),
            "captured": boolean(),
            "determined": boolean(),
            "version": {"type": ["string", "null"]},
            "cpu_isa": {"type": ["string", "null"]},
            "autocast_kernels": array(kernel),
            "float32_kernels": array(kernel),
            "summary": text(),
            "error": {"type": ["string", "null"]},
        },
        ["dtype", "available", "captured", "autocast_kernels", "float32_kernels", "summary"],
        description="which oneDNN kernel ran (its verbose log of one forward)",
    )
    verdict = obj(
        {
            "sentence": text(),
            "hardware": text(),
            "measured": text(),
            "cpu_model": text(),
            "cores": integer(0),
            "threads": integer(0),
            "cpu_capability": text(),
            "dtype": text(),
            "flags": {"type": "object", "additionalProperties": boolean()},
            "native": boolean(),
            "torch_bf16_supported": {"type": ["boolean", "null"]},
            "torch_fp16_supported": {"type": ["boolean", "null"]},
            "mkldnn": boolean(),
            "onednn": {"anyOf": [{"type": "null"}, onednn]},
        },
        [
            "sentence",
            "hardware",
            "measured",
            "cpu_model",
            "cores",
            "threads",
            "cpu_capability",
            "dtype",
            "flags",
            "native",
            "mkldnn",
        ],
    )
    peak = obj(
        {
            "dtype": text(),
            "gflops": number(minimum=0),
            "cores": integer(0),
            "ghz": number(minimum=0),
            "lanes": integer(1),
            "fma_units": integer(1),
            "isa": text(),
            "ghz_source": text(),
            "native": boolean(),
            "note": text(),
            "formula": text(),
            "estimate": boolean(),
        },
        [
            "dtype",
            "gflops",
            "cores",
            "ghz",
            "lanes",
            "fma_units",
            "isa",
            "ghz_source",
            "native",
            "note",
        ],
    )
    roofline = obj(
        {
            "estimate": boolean(),
            "flops_formula": text(),
            "bytes_formula": text(),
            "peak_formula": text(),
            "peaks": {"type": "object", "additionalProperties": peak},
            "points": array(
                obj(
                    {
                        "value": whole,
                        "mode": {"enum": ["plain", "autocast"]},
                        "dtype": text(),
                        "intensity": number(minimum=0),
                        "gflops": number(minimum=0),
                        "flops": integer(0),
                        "bytes": integer(0),
                    },
                    ["value", "mode", "dtype", "gflops", "flops", "bytes"],
                )
            ),
            "note": text(),
        },
        ["peaks"],
        description="achieved GFLOP/s against estimated peaks (labelled as an estimate)",
    )
    values = array(whole, minItems=1, uniqueItems=True)
    return {
        **document(
            "autocast-explorer/sweep/1",
            "Autocast Explorer sweep",
            "float32 vs autocast over many batch sizes or hidden widths (or a batch × width "
            "grid): written by `autocast-explorer sweep --json` and the window's Sweeps tab. "
            "`values` are increasing; `points` hold one point per value (per width row in a "
            "grid), in order.",
        ),
        "type": "object",
        "required": [
            "schema",
            "config",
            "environment",
            "param",
            "values",
            "points",
            "crossover",
            "verdict",
            "roofline",
        ],
        "properties": {
            "schema": {"const": "autocast-explorer/sweep/1"},
            "created": text(),
            "config": ref("config"),
            "environment": ref("environment"),
            "param": {"enum": [*PARAMS, "batch,width"]},
            "values": values,
            "width_values": values,
            "points": array(point),
            "crossover": {
                "description": "null when the speedup never crosses 1.0; else the interpolated "
                "values (a grid: one entry per width)",
                "anyOf": [
                    {"type": "null"},
                    array(number()),
                    array(
                        obj(
                            {
                                "width": whole,
                                "values": {"anyOf": [{"type": "null"}, array(number())]},
                            },
                            ["width", "values"],
                        )
                    ),
                ],
            },
            "crossover_sentence": text(),
            "crossover_interval": {
                "description": "1-D sweeps with intervals: each crossing with where the points' "
                "95% intervals allow it (low/high null: open to the end of the range swept)",
                "anyOf": [
                    {"type": "null"},
                    array(
                        obj(
                            {
                                "value": number(),
                                "low": nullable_number(),
                                "high": nullable_number(),
                            },
                            ["value", "low", "high"],
                        )
                    ),
                ],
            },
            "verdict": verdict,
            "roofline": roofline,
            "warnings": array(text()),
        },
        "if": {"properties": {"param": {"const": "batch,width"}}},
        "then": {
            "required": ["width_values"],
            "properties": {"points": {"items": {"required": ["width"]}}},
        },
        "$defs": document_defs("config", "environment", "latency"),
    }


# ---- op-policy probe -------------------------------------------------------------------------
def ops_schema() -> Schema:
    case = obj(
        {
            "in": array(text(), "the input dtypes"),
            "out": {"type": ["string", "null"], "description": "null when the op raised"},
            "computed": {
                "type": ["string", "null"],
                "description": "the dtype the op computed in where its output does not say it "
                "(bool, int64, complex results); null otherwise",
            },
            "error": {"type": ["string", "null"]},
            "casts": integer(0),
            "kernels": array(text(), "the aten ops dispatched, casts left out"),
        },
        ["in"],
    )
    documented = {
        "type": ["object", "null"],
        "description": "what PyTorch documents for the op (null or absent in files written "
        "before it was kept)",
        "properties": {
            "as": text("the aten name PyTorch's lists use"),
            "policy": {"enum": ["lower", "fp32", "promote", "unlisted"]},
            "docs": {"type": ["string", "null"], "description": "the AMP docs' CPU lists"},
            "tests": {"type": ["string", "null"], "description": "AutocastCPUTestLists"},
            "lists": array(text(), "every list that holds the op"),
        },
        "required": ["policy"],
    }
    return {
        **document(
            "autocast-explorer/ops/1",
            "Autocast Explorer op-policy probe",
            "Which dtype torch.autocast('cpu') gave each op on PyTorch's CPU autocast lists "
            "(and common unlisted ones), measured with float32, low-precision and mixed "
            "inputs, beside what PyTorch documents: written by `autocast-explorer ops --json` "
            "and the window's Ops tab.",
        ),
        "type": "object",
        "required": ["schema", "dtype", "environment", "ops"],
        "properties": {
            "schema": {"const": "autocast-explorer/ops/1"},
            "created": text(),
            "dtype": text("the autocast dtype"),
            "environment": ref("environment"),
            "sources": {
                "type": "object",
                "description": "where the documented policies come from (docs, tests)",
                "additionalProperties": text(),
            },
            "ops": array(
                obj(
                    {
                        "name": text(),
                        "category": text("the catalog's category slug"),
                        "policy": {
                            "enum": ["lower", "fp32", "follows", "promote", "error", "other"],
                        },
                        "why": text(),
                        "error": {"type": ["string", "null"]},
                        "documented": documented,
                        "disagrees": boolean("the measured policy contradicts the documented"),
                        "cases": {"type": "object", "additionalProperties": case},
                    },
                    ["name", "policy", "cases"],
                )
            ),
            "notes": array(
                obj(
                    {
                        "op": text(),
                        "source": text(),
                        "claim": text(),
                        "measured": text(),
                        "verdict": text(),
                        "contradicts": boolean(),
                    },
                    ["op", "source", "claim", "measured", "verdict", "contradicts"],
                ),
                "disagreements with PyTorch's documentation (source starts 'documented for "
                "CPU') and common beliefs, next to what was measured here",
            ),
        },
        "$defs": document_defs("environment"),
    }


# ---- preset ----------------------------------------------------------------------------------
def preset_schema() -> Schema:
    whole = integer(1)
    return {
        **document(
            "autocast-explorer/preset/1",
            "Autocast Explorer preset",
            "A named, described experiment config and optional sweep (built-in presets, the "
            "window's saved presets, `run --preset FILE`). Loading is strict: at most 64 KB, "
            "every key known, the config validated like any other.",
        ),
        "type": "object",
        "required": ["schema", "name", "description", "config"],
        "additionalProperties": False,
        "properties": {
            "schema": {"const": "autocast-explorer/preset/1"},
            "name": {
                "type": "string",
                "pattern": "^[^\\n]*\\S[^\\n]*$",
                "maxLength": 80,
                "description": "one line, what the preset list shows",
            },
            "description": {"type": "string", "pattern": "\\S", "maxLength": 600},
            "config": ref("config"),
            "sweep": {
                "anyOf": [
                    {"type": "null"},
                    obj(
                        {
                            "param": {"enum": list(PARAMS)},
                            "values": array(
                                whole,
                                "at least 2 distinct values (repeats are dropped)",
                                minItems=2,
                            ),
                            "width_values": array(whole, "a batch × width grid's widths"),
                        },
                        ["param", "values"],
                        closed=True,
                    ),
                ]
            },
        },
        "$defs": {"config": config(closed=True)},
    }


SCHEMAS = {
    "result.schema.json": result_schema,
    "sweep.schema.json": sweep_schema,
    "ops.schema.json": ops_schema,
    "preset.schema.json": preset_schema,
}


def render(build: Any) -> str:
    return json.dumps(build(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 on a difference")
    args = parser.parse_args(argv)
    stale = []
    for name, build in SCHEMAS.items():
        path = OUT / name
        wanted = render(build)
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == wanted:
            continue
        stale.append(name)
        if not args.check:
            OUT.mkdir(parents=True, exist_ok=True)
            path.write_text(wanted, encoding="utf-8")
    if args.check and stale:
        print(f"out of date: {', '.join(stale)} (run python tools/write_schemas.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

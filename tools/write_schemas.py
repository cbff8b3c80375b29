"""Write the published JSON Schemas (draft 2020-12) into resources/schemas/.

The schemas are package data that other tools read, so they are plain JSON files. Each is
self-contained (shared parts copied into `$defs`) so a consumer needs one file, no registry.

The result document's schema is generated from its one typed definition (ResultPart in
core/experiment/result.py, made of the parts beside each dataclass), the config's from
ExperimentConfig (core/experiment/config_schema.py); this script only writes them. The sweep,
probe and preset schemas below are still described here by hand, from the generated
environment, latency and config parts, until those documents are models too.

    python tools/write_schemas.py           # rewrite the files
    python tools/write_schemas.py --check   # exit 1 if a file differs (the test suite runs this)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout's package, also when run as a plain script

# The checkout's package, imported after the path is set (E402).
from autocast_explorer.core.documents.model import part_schema  # noqa: E402
from autocast_explorer.core.experiment.config_schema import config_schema  # noqa: E402
from autocast_explorer.core.experiment.result import result_schema  # noqa: E402
from autocast_explorer.core.experiment.timing import LatencyPart  # noqa: E402
from autocast_explorer.core.hardware.cpu import EnvironmentPart  # noqa: E402
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


# ---- shared parts (generated: the config's from ExperimentConfig, the rest from the models) -----
def config(closed: bool) -> Schema:
    return config_schema(closed)


ENVIRONMENT = part_schema(EnvironmentPart)
LATENCY = part_schema(LatencyPart)


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

"""The JSON Schema of ExperimentConfig, for the published document schemas.

The config is read by ExperimentConfig.from_dict (its own validate(): ranges, family rules), not
by a document model; its schema is made here from each field's one definition (config.py,
config_fields.py): the type from the annotation, the bounds from the field's rule, the
description from its help sentence (a family parameter's names the families that take it, from
the registry), so a new field is in the schemas as soon as tools/write_schemas.py reruns.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.config_fields import field_specs
from autocast_explorer.core.experiment.families import FAMILIES

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


def field_description(name: str, default: Any) -> str:
    """The field's help sentence with its default; a family parameter's names its families."""
    spec = field_specs(ExperimentConfig)[name]
    text = spec.described(default).replace("`", "")
    if spec.part == "family":
        owners = [f.name for f in FAMILIES.values() if any(p.name == name for p in f.params)]
        text = f"{', '.join(owners)}: {text}"
    return text


def config_properties() -> dict[str, Schema]:
    """ExperimentConfig's fields: the annotation's type plus the field's rule and help."""
    properties = {}
    for field in dataclasses.fields(ExperimentConfig):
        annotation = field.type if isinstance(field.type, str) else field.type.__name__
        base = FIELD_TYPES.get(annotation, {})
        rule = field_specs(ExperimentConfig)[field.name].rule
        bounds = rule.bounds() if rule else {}
        if not base and not {"type", "enum"} & set(bounds):
            raise ValueError(
                f"config field {field.name!r}: no schema for {annotation!r}; add it to "
                "FIELD_TYPES or give the field's rule a type or enum"
            )
        if "enum" in bounds:
            base = {}  # the enum says it all (and a nullable one lists None itself)
        description = field_description(field.name, field.default)
        properties[field.name] = {"description": description} | base | bounds
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

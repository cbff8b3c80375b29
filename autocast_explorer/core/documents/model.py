"""The one typed definition every document is made of (pydantic v2 models).

A document (result, sweep, probe, preset, settings values) is a tree of `Part` models built from
the field types of `field_types` (`Text`, `Whole`, `NonNegative`…). From that one tree come:

- strict reading (`read`): the same words as the hand reader before it — the document kind, the
  dotted path of the first bad field, then the problem (`result: latency.plain.median_ms:
  expected a number ≥ 0`); NaN/Infinity are refused earlier, by `parse_json`; text is stripped of
  control characters as it is read;
- writing (`dump`): the keys and their order, by the model's field names or aliases;
- the published JSON Schema (`schema`), which tools/write_schemas.py only writes to disk.

Each field type checks its value itself, so a refusal keeps the old reader's words. Objects
ignore keys they do not know, so a newer file still loads.

Why pydantic and not msgspec: see docs/architecture.md (measured import cost and messages).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    model_serializer,
    model_validator,
)

from autocast_explorer.core.documents.field_types import NotNull
from autocast_explorer.core.documents.field_types import refuse as refuse
from autocast_explorer.core.documents.reader import (
    DocumentFormatError,
    clean_text,
    describe_slip,
)

DRAFT = "https://json-schema.org/draft/2020-12/schema"

P = TypeVar("P", bound="Part")


class Part(BaseModel):
    """An object of a document, the one class the program computes with and the file holds.

    Read from a file (`read`), unknown keys are ignored (a newer file loads); made by the program
    (`Part(key=…)`), every value is validated and an unknown keyword is a TypeError, so a
    misspelt key can never be stored silently. Keys may be given by field name or alias (`in`).
    An `Omittable` field left None is not written (older readers expect the key absent)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)

    #: The part's name in the published schemas' `$defs` when it is not the class name's
    #: (`ExperimentResult` was `ResultPart`, "result"): the schemas keep their names.
    schema_name: ClassVar[str] = ""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if "schema_name" in cls.__dict__:
            _SCHEMA_NAMES[cls.__name__] = cls.schema_name

    # Not an __init__: pydantic calls a model's own __init__ while reading a file too.
    @model_validator(mode="before")
    @classmethod
    def _as_the_program_made_it(cls, data: Any, info: ValidationInfo) -> Any:
        """Made by the program (not read, see `read`): an unknown keyword is a TypeError and an
        Omittable None is left out."""
        if info.context is _READING or not isinstance(data, dict):
            return data
        unknown = data.keys() - _known_keys(cls)
        if unknown:
            raise TypeError(f"{cls.__name__} has no field {sorted(unknown)[0]!r}")
        omittable = _omittable_keys(cls)
        return {k: v for k, v in data.items() if v is not None or k not in omittable}

    @model_serializer(mode="wrap")
    def _leave_out_absent(self, write: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = write(self)
        for key in _omittable_keys(type(self)):
            if key in out and out[key] is None:
                del out[key]
        return out


_SCHEMA_NAMES: dict[str, str] = {}
#: The validation context of `read`: the values come from a file, not from the program.
_READING = {"from": "a file"}


@functools.cache
def _known_keys(model: type[BaseModel]) -> frozenset[str]:
    names = set(model.model_fields)
    names.update(f.alias for f in model.model_fields.values() if f.alias)
    return frozenset(names)


@functools.cache
def _omittable_keys(model: type[BaseModel]) -> tuple[str, ...]:
    """Both spellings of every Omittable field (a dump may be by alias or not)."""
    keys: list[str] = []
    for name, info in model.model_fields.items():
        if any(isinstance(m, NotNull) for m in info.metadata):
            keys += [name, info.alias] if info.alias else [name]
    return tuple(keys)


class OpenPart(Part):
    """An object whose unknown keys are kept (`model_extra`): a document's top level, where
    other tools' sections (placements, report notes) ride along."""

    model_config = ConfigDict(extra="allow")


_STRUCTURE = {
    "missing": "missing",
    "model_type": "expected a JSON object",
    "model_attributes_type": "expected a JSON object",
    "dict_type": "expected a JSON object",
    "list_type": "expected a list",
    "tuple_type": "expected a list",
    "string_type": "expected text",
    "bool_type": "expected true or false",
}


def _path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _words(error: Any) -> str:
    """One pydantic error as `path: problem`, in the old reader's words."""
    loc = tuple(p for p in error["loc"] if not _is_union_tag(p))
    ctx = error.get("ctx") or {}
    at = ctx.get("at", "")
    if error["type"] == "document":
        problem = ctx["problem"]
    else:
        problem = _STRUCTURE.get(error["type"], clean_text(error["msg"]))
    path = _path(loc)
    if at:
        path = f"{path}.{at}" if path and not at.startswith("[") else f"{path}{at}"
    return f"{path or 'document'}: {problem}"


def _is_union_tag(part: int | str) -> bool:
    """pydantic names the union member it tried (`function-before[...]`, `LatencyPart`): not a
    key of the document."""
    return isinstance(part, str) and ("[" in part or part.endswith("Part"))


def read(model: type[P], data: Any, kind: str = "", at: str = "") -> P:
    """`data` (parsed JSON) as `model`, or DocumentFormatError naming `kind` and the first bad
    field's dotted path (below `at`: a part read on its own, e.g. `Environment.from_dict(data,
    "environment")`)."""
    try:
        return model.model_validate(data, context=_READING)
    except ValidationError as exc:
        words = _words(exc.errors()[0])
        if at:
            words = (
                f"{at}: {words.removeprefix('document: ')}"
                if words.startswith("document: ")
                else f"{at}{'' if words.startswith('[') else '.'}{words}"
            )
        raise DocumentFormatError(words, kind) from None
    except RecursionError:
        raise DocumentFormatError("nested too deeply", kind) from None
    except (TypeError, ValueError, KeyError, AttributeError, OverflowError) as exc:
        if isinstance(exc, DocumentFormatError):
            raise
        raise DocumentFormatError(f"not a valid {kind} ({describe_slip(exc)})", kind) from None


def dump(part: BaseModel) -> dict[str, Any]:
    """The JSON object of a part: aliases as keys, only the fields that were given (an optional
    section that was not measured stays absent, as readers of older files expect)."""
    return part.model_dump(mode="json", by_alias=True, exclude_unset=True)


def schema(
    model: type[BaseModel],
    tag: str,
    title: str,
    description: str,
    defs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The published JSON Schema (draft 2020-12) of a document whose `schema` key is `tag`.

    Self-contained: shared parts live in `$defs` under plain names (`Environment` →
    `environment`), plus `defs` made elsewhere (the config's, by ExperimentConfig's rules).
    """
    body = model.model_json_schema(by_alias=True, mode="validation")
    found = body.pop("$defs", {})
    names = {name: _def_name(name) for name in found}
    body = _renamed(body, names)
    _strip_titles(body)
    out: dict[str, Any] = {
        "$schema": DRAFT,
        "$id": f"urn:{tag.replace('/', ':')}",
        "title": title,
        "description": description,
        **{k: v for k, v in body.items() if k not in ("title", "description")},
    }
    out["properties"]["schema"] = {"const": tag}
    all_defs = {names[name]: _renamed(part, names) for name, part in found.items()}
    all_defs.update(defs or {})
    _strip_titles(all_defs)
    if all_defs:
        out["$defs"] = dict(sorted(all_defs.items()))
    return out


def part_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The schema of one part on its own, for documents still described by hand (it must need no
    `$defs`: a part made of field types only)."""
    body = model.model_json_schema(by_alias=True, mode="validation")
    if "$defs" in body:
        raise ValueError(f"{model.__name__} refers to other parts; use schema()")
    _strip_titles(body)
    return body


def _def_name(name: str) -> str:
    """`LayerError` → `layer_error` (a final "Part" dropped), or the class's `schema_name`: the
    names the schemas used before they were generated."""
    if name in _SCHEMA_NAMES:
        return _SCHEMA_NAMES[name]
    stem = name.removesuffix("Part")
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in stem).lstrip("_")


def def_ref(name: str) -> WithJsonSchema:
    """Annotate a field whose schema is one of `schema(defs=…)`'s (made outside the models)."""
    return WithJsonSchema({_OUTSIDE_DEF: name})


_OUTSIDE_DEF = "x-outside-def"


@dataclass(frozen=True)
class SchemaWhenMade:
    """Annotate a field whose JSON Schema is made each time a schema is, not when its model is
    defined: an enum a registry fills (a sweep's `param`, from the model families registered
    by then). pydantic calls `__get_pydantic_json_schema__` at every generation."""

    make: Callable[[], dict[str, Any]]

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> dict[str, Any]:
        return self.make()


def _renamed(node: Any, names: dict[str, str]) -> Any:
    if isinstance(node, dict):
        if _OUTSIDE_DEF in node:
            rest = {k: v for k, v in node.items() if k != _OUTSIDE_DEF}
            return {"$ref": f"#/$defs/{node[_OUTSIDE_DEF]}", **rest}
        out = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                value = "#/$defs/" + names.get(value.removeprefix("#/$defs/"), value[8:])
            out[key] = _renamed(value, names)
        return out
    if isinstance(node, list):
        return [_renamed(item, names) for item in node]
    return node


def _strip_titles(node: Any) -> None:
    """pydantic titles every property with its name again; the files stay as readable as before."""
    if isinstance(node, dict):
        node.pop("title", None)
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for prop in value.values():
                    _strip_titles(prop)
            else:
                _strip_titles(value)
    elif isinstance(node, list):
        for item in node:
            _strip_titles(item)


def nan_if_none(value: float | None) -> float:
    """A nullable number as the program holds it: null (not finite when written) → NaN."""
    return math.nan if value is None else value

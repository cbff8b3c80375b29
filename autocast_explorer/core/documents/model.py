"""The one typed definition every document is made of (pydantic v2 models).

A document (result, sweep, probe, preset, settings values) is a tree of `Part` models built from
the field types below. From that one tree come:

- strict reading (`read`): the same words as the hand reader before it — the document kind, the
  dotted path of the first bad field, then the problem (`result: latency.plain.median_ms:
  expected a number ≥ 0`); NaN/Infinity are refused earlier, by `parse_json`; text is stripped of
  control characters as it is read;
- writing (`dump`): the keys and their order, by the model's field names or aliases;
- the published JSON Schema (`schema`), which tools/write_schemas.py only writes to disk.

Each field type checks its value itself (a BeforeValidator), so a refusal says what the old
reader said ("expected a whole number ≥ 0" for 2.5, "7" and true alike); the pydantic
constraint beside it (ge, gt…) only puts the bound into the schema. Objects ignore keys they do
not know, so a newer file still loads.

Why pydantic and not msgspec: see docs/architecture.md (measured import cost and messages).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, WithJsonSchema
from pydantic_core import PydanticCustomError

from autocast_explorer.core.documents.reader import (
    DocumentFormatError,
    clean_text,
    describe_slip,
    is_finite_number,
)

DRAFT = "https://json-schema.org/draft/2020-12/schema"

P = TypeVar("P", bound="Part")


class Part(BaseModel):
    """An object of a document: unknown keys are ignored (newer files load), keys may be given by
    field name or alias (`in`, `out`)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, frozen=True)


class OpenPart(Part):
    """An object whose unknown keys are kept (`model_extra`): a document's top level, where
    other tools' sections (placements, report notes) ride along."""

    model_config = ConfigDict(extra="allow")


# ---- refusals ----------------------------------------------------------------------------------
def refuse(problem: str, at: str = "") -> PydanticCustomError:
    """The error for a field (raise it); `at` names a key below the one being validated."""
    return PydanticCustomError("document", "{problem}", {"problem": problem, "at": at})


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
        return model.model_validate(data)
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


def build(model: type[P], **values: Any) -> P:
    """A part made from values the program computed (trusted: not validated again); omit a
    keyword to leave an optional key out of the file."""
    return model.model_construct(**values)


def schema(
    model: type[BaseModel],
    tag: str,
    title: str,
    description: str,
    defs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The published JSON Schema (draft 2020-12) of a document whose `schema` key is `tag`.

    Self-contained: shared parts live in `$defs` under plain names (`EnvironmentPart` →
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
    """`LayerErrorPart` → `layer_error`: the names the schemas used before they were generated."""
    stem = name.removesuffix("Part")
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in stem).lstrip("_")


def def_ref(name: str) -> WithJsonSchema:
    """Annotate a field whose schema is one of `schema(defs=…)`'s (made outside the models)."""
    return WithJsonSchema({_OUTSIDE_DEF: name})


_OUTSIDE_DEF = "x-outside-def"


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


def schema_tag(tag: str) -> Any:
    """The `schema` key: text that must be `tag` (a sweep handed to the result reader says so)."""

    def check(value: Any) -> Any:
        if not isinstance(value, str):
            raise refuse("expected text")
        if value != tag:
            raise refuse(f"expected {tag!r}, got {clean_text(value)[:80]!r}")
        return value

    return Annotated[str, BeforeValidator(check)]


# ---- field types -------------------------------------------------------------------------------
def _bound(ge: float | None, gt: float | None, le: float | None = None) -> str:
    if ge is not None and le is not None:
        return f" in {ge:g} … {le:g}"
    if gt is not None:
        return f" > {gt:g}"
    return f" ≥ {ge:g}" if ge is not None else ""


def _number_check(
    ge: float | None, gt: float | None, le: float | None, nullable: bool
) -> Callable[[Any], Any]:
    words = f"expected a number{_bound(ge, gt, le)}"

    def check(value: Any) -> Any:
        if value is None and nullable:
            return None
        if not is_finite_number(value):
            raise refuse(words)
        number = float(value)
        if (ge is not None and number < ge) or (gt is not None and number <= gt):
            raise refuse(f"expected a number{_bound(ge, gt)}")
        if le is not None and number > le:
            raise refuse(words)
        return number

    return check


def Number(
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    description: str | None = None,
) -> Any:
    """A finite JSON number (not true/false, not "3"), optionally bounded."""
    return Annotated[
        float,
        Field(ge=ge, gt=gt, le=le, description=description),
        BeforeValidator(_number_check(ge, gt, le, nullable=False)),
    ]


def NullableNumber(
    ge: float | None = None, le: float | None = None, description: str | None = None
) -> Any:
    """A finite number or null (what a NaN or infinity is written as)."""
    return Annotated[
        float | None,
        Field(ge=ge, le=le, description=description),
        BeforeValidator(_number_check(ge, None, le, nullable=True)),
    ]


def _whole_check(ge: int | None, nullable: bool = False) -> Callable[[Any], Any]:
    words = f"expected a whole number{_bound(ge, None)}"

    def check(value: Any) -> Any:
        if value is None and nullable:
            return None
        ok = is_finite_number(value) and float(value).is_integer()
        if not ok or (ge is not None and value < ge):
            raise refuse(words)
        return int(value)

    return check


def Whole(ge: int | None = 0, description: str | None = None) -> Any:
    """A whole number (JSON 3 or 3.0, not 3.5, "3" or true), bounded below (default ≥ 0)."""
    return Annotated[int, Field(ge=ge, description=description), BeforeValidator(_whole_check(ge))]


def _text_check(multiline: bool) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not isinstance(value, str):
            raise refuse("expected text")
        return clean_text(value, multiline)

    return check


def Text(multiline: bool = False, description: str | None = None) -> Any:
    """Text, stripped of control characters (newlines kept only when `multiline`)."""
    return Annotated[str, Field(description=description), BeforeValidator(_text_check(multiline))]


def _optional_text_check(value: Any) -> Any:
    return None if value is None else _text_check(False)(value)


def NullableText(description: str | None = None) -> Any:
    return Annotated[
        str | None, Field(description=description), BeforeValidator(_optional_text_check)
    ]


def _flag_check(nullable: bool) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if value is None and nullable:
            return None
        if not isinstance(value, bool):
            raise refuse("expected true or false")
        return value

    return check


def Flag(description: str | None = None) -> Any:
    """true or false (not 1, not "yes")."""
    return Annotated[bool, Field(description=description), BeforeValidator(_flag_check(False))]


def NullableFlag(description: str | None = None) -> Any:
    """true, false or null (e.g. a torch query this torch does not have)."""
    return Annotated[
        bool | None, Field(description=description), BeforeValidator(_flag_check(True))
    ]


def _list_check(item: Callable[[Any], Any], words: str) -> Callable[[Any], Any]:
    """A list whose items all pass `item`; one refusal for the whole list, as the reader said."""

    def check(value: Any) -> Any:
        if not isinstance(value, list | tuple):
            raise refuse(words)
        out = []
        for v in value:
            try:
                out.append(item(v))
            except PydanticCustomError:
                raise refuse(words) from None
        return tuple(out)

    return check


def Numbers(ge: float | None = None, description: str | None = None) -> Any:
    """A list of finite numbers, each optionally bounded below."""
    words = f"expected a list of numbers{_bound(ge, None)}"
    return Annotated[
        tuple[Annotated[float, Field(ge=ge)], ...],
        Field(description=description),
        BeforeValidator(_list_check(_number_check(ge, None, None, False), words)),
    ]


def NullableNumbers(description: str | None = None) -> Any:
    """A list of numbers where null stands for a value that was not finite."""
    return Annotated[
        tuple[float | None, ...],
        Field(description=description),
        BeforeValidator(
            _list_check(_number_check(None, None, None, True), "expected a list of numbers")
        ),
    ]


def Wholes(ge: int | None = 0, description: str | None = None, min_items: int | None = None) -> Any:
    """A list of whole numbers, each bounded below (default ≥ 0); `min_items` is stated in the
    schema only (the reader that needs it says why in its own words)."""
    words = f"expected a list of whole numbers{_bound(ge, None)}"
    extra = None if min_items is None else {"minItems": min_items}
    return Annotated[
        tuple[Annotated[int, Field(ge=ge)], ...],
        Field(description=description, json_schema_extra=extra),
        BeforeValidator(_list_check(_whole_check(ge), words)),
    ]


def Texts(multiline: bool = False, description: str | None = None) -> Any:
    """A list of texts (a single text where a list goes is refused)."""
    return Annotated[
        tuple[str, ...],
        Field(description=description),
        BeforeValidator(_list_check(_text_check(multiline), "expected a list of texts")),
    ]


def _map_check(item: Callable[[Any], Any], words: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not isinstance(value, dict):
            raise refuse("expected a JSON object")
        out = {}
        for key, v in value.items():
            try:
                out[clean_text(key)] = item(v)
            except PydanticCustomError:
                raise refuse(words, at=str(key)) from None
        return out

    return check


def TextMap(description: str | None = None) -> Any:
    """An object of texts by name (parameter → gradient dtype)."""
    return Annotated[
        dict[str, str],
        Field(description=description),
        BeforeValidator(_map_check(_text_check(False), "expected text")),
    ]


def WholeMap(description: str | None = None) -> Any:
    """An object of counts by name (op → casts)."""
    return Annotated[
        dict[str, Annotated[int, Field(ge=0)]],
        Field(description=description),
        BeforeValidator(_map_check(_whole_check(0), "expected a whole number ≥ 0")),
    ]


def FlagMap(description: str | None = None) -> Any:
    """An object of true/false by name (per mode)."""
    return Annotated[
        dict[str, bool],
        Field(description=description),
        BeforeValidator(_map_check(_flag_check(False), "expected true or false")),
    ]


def AnyObject(description: str | None = None) -> Any:
    """A JSON object kept as it is (free-form facts such as environment.extra)."""

    def check(value: Any) -> Any:
        if not isinstance(value, dict):
            raise refuse("expected a JSON object")
        return dict(value)

    return Annotated[dict[str, Any], Field(description=description), BeforeValidator(check)]


def nan_if_none(value: float | None) -> float:
    """A nullable number as the program holds it: null (not finite when written) → NaN."""
    return math.nan if value is None else value

"""One definition per config field: its part, help sentence, rule and the rule's JSON Schema.

Each ExperimentConfig field is declared with `spec(default, part, help, rule)` (config.py), so
everything about it sits on one line group; validate(), the schema (config_schema.py), the
command line's flags (cli/common.py), the part tables and the docs table read it back from
the field's metadata. Torch-free and below config.py (it imports nothing of the config).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, TypeVar

#: The parts a config is made of, in the order the docs table lists them. "interventions" (what
#: a run changes in the model, e.g. layers kept in float32) has no field yet.
Part = Literal["model", "measurement", "family", "user model", "data", "training", "interventions"]
PARTS: tuple[Part, ...] = (
    "model",
    "measurement",
    "family",
    "user model",
    "data",
    "training",
    "interventions",
)
Schema = dict[str, Any]
#: (value, config) → the refusal words (after "error: FIELD: "), or None when the value is fine.
Refuse = Callable[[Any, Any], "str | None"]
T = TypeVar("T")
_SPEC = "autocast_explorer.spec"


@dataclass(frozen=True)
class Rule:
    """A field's check and the JSON Schema bounds that say it (those a schema can say)."""

    refuse: Refuse
    schema: Schema | Callable[[], Schema] = dataclasses.field(default_factory=dict)

    def bounds(self) -> Schema:
        """The schema fragment, made now (a model enum follows the registered families)."""
        return dict(self.schema() if callable(self.schema) else self.schema)


@dataclass(frozen=True)
class FieldSpec:
    """Everything about a config field but its type and default (the dataclass field's)."""

    part: Part
    #: The help sentence; `other_field` in backquotes is a flag in --help, plain in the schema.
    help: str | Callable[[], str]
    rule: Rule | None = None
    #: How the default reads in help: None → "default VALUE"; "" → nothing.
    default_words: str | None = None
    metavar: str | None = None
    #: The command-line flag: "" → --field-name; None → no flag.
    flag: str | None = ""
    #: How typed text becomes the value (a comma list, KEY=VALUE); None: the type's own.
    text: Callable[[str], Any] | None = None
    #: The flag is given once per item (--model-arg A=1 --model-arg B=2).
    repeat: bool = False

    def sentence(self) -> str:
        """The help sentence, without the default."""
        return self.help() if callable(self.help) else self.help

    def described(self, default: Any) -> str:
        """The help sentence with its default: what --help, the schema and the docs say."""
        words = self.default_words
        if words is None:
            shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
            words = f"default {shown}"
        return f"{self.sentence()} ({words})" if words else self.sentence()


def spec(
    default: T,
    part: Part,
    help: str | Callable[[], str],
    rule: Rule | None = None,
    **more: Any,
) -> T:
    """A dataclass field holding `default`, with its FieldSpec in the field's metadata."""
    meta = {_SPEC: FieldSpec(part, help, rule, **more)}
    return dataclasses.field(default=default, metadata=meta)


def field_spec(field: dataclasses.Field[Any]) -> FieldSpec:
    """The spec of a dataclass field declared with `spec(...)`."""
    found = field.metadata.get(_SPEC)
    if not isinstance(found, FieldSpec):
        raise TypeError(f"config field {field.name!r} was not declared with spec(...)")
    return found


@functools.cache
def field_specs(cls: type) -> Mapping[str, FieldSpec]:
    """Every field's spec, in field order (read-only: made once per class)."""
    return MappingProxyType({f.name: field_spec(f) for f in dataclasses.fields(cls)})


def part_fields(cls: type, part: Part) -> tuple[str, ...]:
    """The fields of one part, in field order."""
    return tuple(name for name, s in field_specs(cls).items() if s.part == part)


# ---- rules ----------------------------------------------------------------------------------
def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """A finite int or float (not bool, NaN or ±inf: JSON cannot store those)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def whole(
    low: int,
    high: int | None = None,
    *,
    ceiling: int | None = None,
    nullable: bool = False,
    noun: str = "a whole number",
    span: str = "",
) -> Rule:
    """An int in low … high; `ceiling` is a bound against typing slips the schema leaves out."""
    top = high if high is not None else ceiling
    reach = span or (f"≥ {low}" if top is None else f"in {low} … {top}")

    def refuse(value: Any, config: Any) -> str | None:
        if value is None and nullable:
            return None
        if is_int(value) and low <= value and (top is None or value <= top):
            return None
        return f"must be {noun} {reach} (got {value!r})"

    schema: Schema = {"minimum": low}
    if high is not None:
        schema["maximum"] = high
    return Rule(refuse, schema)


def number(
    low: float,
    high: float | None = None,
    *,
    ceiling: float | None = None,
    above: bool = False,
    nullable: bool = False,
    words: str = "",
) -> Rule:
    """A finite number in low … high (`above`: strictly above low); `ceiling` as in whole()."""
    top = high if high is not None else ceiling
    words = words or f"must be a number in {low:g} … {top:g}"

    def refuse(value: Any, config: Any) -> str | None:
        if value is None and nullable:
            return None
        fits = is_number(value) and (value > low if above else value >= low)
        if fits and (top is None or value <= top):
            return None
        return f"{words} (got {value!r})"

    schema: Schema = {"exclusiveMinimum" if above else "minimum": low}
    if high is not None:
        schema["maximum"] = high
    return Rule(refuse, schema)


def choice(values: tuple[str, ...]) -> Rule:
    """One of `values` (the schema's enum)."""

    def refuse(value: Any, config: Any) -> str | None:
        if value in values:
            return None
        return f"must be one of {', '.join(values)} (got {value!r})"

    return Rule(refuse, {"enum": list(values)})


def boolean() -> Rule:
    """true or false (not 0 or 1)."""
    return Rule(lambda value, config: None if isinstance(value, bool) else "must be true or false")

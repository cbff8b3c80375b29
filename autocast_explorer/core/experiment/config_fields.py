"""One definition per config field: its help sentence, rule, flag and window input.

Each field is declared with `spec(default, help, rule)` in the part it belongs to, a frozen
dataclass marked `@config_part(name)` (config_parts.py); ExperimentConfig is composed of the
parts (config.py). validate(), the schema (config_schema.py), the command line's flags
(cli/common.py), the part tables, the docs table and the window's inputs read it back from the
field's metadata. Torch-free and below the parts (it imports nothing of the config).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, TypeVar, cast

#: The parts a config is made of, in the order the docs table lists them. "interventions": what
#: a run changes in the model (layers kept in float32).
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
#: What spec(...) stores until its class is marked with its part (config_part).
_DECLARED = "autocast_explorer.declared"
#: How a field's value is typed in: what its input in the window is, what its flag parses.
Kind = Literal["bool", "int", "float", "choice", "ints", "text", "other"]


@dataclass(frozen=True)
class Rule:
    """A field's check and the JSON Schema bounds that say it (those a schema can say)."""

    refuse: Refuse
    schema: Schema | Callable[[], Schema] = dataclasses.field(default_factory=dict)
    #: A bound against typing slips that the schema leaves out (an input's top, if it has none).
    ceiling: float | None = None

    def bounds(self) -> Schema:
        """The schema fragment, made now (a model enum follows the registered families)."""
        return dict(self.schema() if callable(self.schema) else self.schema)


@dataclass(frozen=True)
class Control:
    """How the window shows a field, in words and numbers (core has no Qt): a field with a
    Control gets its input made and bound from it and from its rule
    (gui/features/experiment/field_inputs.py)."""

    #: The row's label with & before its mnemonic ("&Batch"); a check box's text for a bool.
    label: str
    #: The tooltip; "" → the help sentence.
    tip: str = ""
    #: The input's range where the window's differs from the rule's bounds.
    minimum: float | None = None
    maximum: float | None = None
    #: A number input's decimals and step.
    decimals: int = 3
    step: float = 1.0
    suffix: str = ""
    #: What the input shows for None (it stands at its minimum, 0); a callable is asked then.
    none_text: str | Callable[[], str] = ""
    #: (value, shown text) of a choice whose words in the window differ from its values.
    items: tuple[tuple[str, str], ...] = ()
    #: The input's objectName where it is not the field's name in camel case plus its kind's
    #: ending ("batchSpin", "dtypeCombo").
    name: str = ""
    #: A text input's hint when empty.
    placeholder: str = ""

    def shown_none(self) -> str:
        return self.none_text() if callable(self.none_text) else self.none_text


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
    #: The field's input in the window; None: no input made from the spec (a hand-built one,
    #: or none: the experiment state keeps the field).
    control: Control | None = None

    def sentence(self) -> str:
        """The help sentence, without the default."""
        return self.help() if callable(self.help) else self.help

    def tooltip(self) -> str:
        """The window's tooltip: the control's tip, else the help sentence as a sentence."""
        if self.control is not None and self.control.tip:
            return self.control.tip
        sentence = self.sentence().replace("`", "")
        return sentence[:1].upper() + sentence[1:] + "."

    def described(self, default: Any) -> str:
        """The help sentence with its default: what --help, the schema and the docs say."""
        words = self.default_words
        if words is None:
            shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
            words = f"default {shown}"
        return f"{self.sentence()} ({words})" if words else self.sentence()


def spec(
    default: T,
    help: str | Callable[[], str],
    rule: Rule | None = None,
    **more: Any,
) -> T:
    """A dataclass field holding `default`; its class's `config_part` makes it a FieldSpec."""
    meta = {_DECLARED: {"help": help, "rule": rule, **more}}
    return dataclasses.field(default=default, metadata=meta)


#: The part classes by part name, in the order they were marked (config_parts.py).
PART_CLASSES: dict[Part, type] = {}


def config_part(part: Part) -> Callable[[type[T]], type[T]]:
    """Mark a frozen dataclass as the config part `part`: each of its fields declared with
    spec(...) gets its FieldSpec (the part named once, here, not on every field)."""

    def mark(cls: type[T]) -> type[T]:
        if part in PART_CLASSES:
            raise ValueError(f"config part {part!r} is defined twice")
        for field in dataclasses.fields(cast(Any, cls)):
            declared = field.metadata.get(_DECLARED)
            if declared is None:
                raise TypeError(f"config field {field.name!r} was not declared with spec(...)")
            field.metadata = MappingProxyType({_SPEC: FieldSpec(part, **declared)})
        PART_CLASSES[part] = cls
        return cls

    return mark


def field_spec(field: dataclasses.Field[Any]) -> FieldSpec:
    """The spec of a dataclass field declared with `spec(...)` in a config part."""
    found = field.metadata.get(_SPEC)
    if not isinstance(found, FieldSpec):
        raise TypeError(f"config field {field.name!r} was not declared with spec(...) in a part")
    return found


@functools.cache
def field_specs(cls: type) -> Mapping[str, FieldSpec]:
    """Every field's spec, in field order (read-only: made once per class)."""
    return MappingProxyType({f.name: field_spec(f) for f in dataclasses.fields(cls)})


def part_fields(cls: type, part: Part) -> tuple[str, ...]:
    """The fields of one part, in field order."""
    return tuple(name for name, s in field_specs(cls).items() if s.part == part)


def field_kind(field: dataclasses.Field[Any]) -> Kind:
    """How the field's value is typed in, from its annotation and rule (None aside)."""
    annotation = field.type if isinstance(field.type, str) else field.type.__name__
    base = annotation.split(" |")[0]
    rule = field_spec(field).rule
    if base == "str":
        return "choice" if rule is not None and "enum" in rule.bounds() else "text"
    kinds: dict[str, Kind] = {"bool": "bool", "int": "int", "float": "float"}
    return "ints" if base == "tuple[int, ...]" else kinds.get(base, "other")


def input_range(field: dataclasses.Field[Any]) -> tuple[float, float | None]:
    """A number input's range: the control's, else the rule's bounds; a field whose default is
    None starts at 0 (standing for None); an exclusive minimum is one step of the last
    decimal above it. The top is None when nothing bounds it (the input's own limit)."""
    spec = field_spec(field)
    control = spec.control or Control("")
    bounds = spec.rule.bounds() if spec.rule else {}
    low: float
    if control.minimum is not None:
        low = control.minimum
    elif field.default is None:
        low = 0
    elif "exclusiveMinimum" in bounds:
        low = bounds["exclusiveMinimum"] + 10.0**-control.decimals
    else:
        low = bounds.get("minimum", 0)
    high = control.maximum if control.maximum is not None else bounds.get("maximum")
    if high is None and spec.rule is not None:
        high = spec.rule.ceiling
    return low, high


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
    return Rule(refuse, schema, ceiling)


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
    return Rule(refuse, schema, ceiling)


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

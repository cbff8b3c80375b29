"""The field types documents are made of: `Annotated` aliases, so a type checker reads the plain
type (str, float, int, a tuple) and pydantic reads that type plus its check.

Each field type checks its value itself (a BeforeValidator), so a refusal says what the old
reader said ("expected a whole number ≥ 0" for 2.5, "7" and true alike); the pydantic
constraint beside it (ge, le…) only puts the bound into the schema. A field with a description
wraps its type once more, `Annotated[Whole, Field(description="…")]` (pydantic merges the two);
a bound no alias names is spelled with the rules behind the aliases,
`Annotated[int, *whole_rules(ge=None)]`.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, get_args

from pydantic import BeforeValidator, Field, GetCoreSchemaHandler, PlainSerializer, WithJsonSchema
from pydantic_core import CoreSchema, PydanticCustomError

from autocast_explorer.core.documents.reader import (
    MAX_DOCUMENT_TEXT_CHARS,
    cap_text,
    clean_text,
    is_finite_number,
)

Check = Callable[[Any], Any]
T = TypeVar("T")


def refuse(problem: str, at: str = "") -> PydanticCustomError:
    """The error for a field (raise it); `at` names a key below the one being validated."""
    return PydanticCustomError("document", "{problem}", {"problem": problem, "at": at})


def schema_tag(tag: str) -> BeforeValidator:
    """The `schema` key's check, `Annotated[str, schema_tag(SCHEMA)]`: text that must be `tag`
    (a sweep handed to the result reader says so)."""

    def check(value: Any) -> Any:
        if not isinstance(value, str):
            raise refuse("expected text")
        if value != tag:
            raise refuse(f"expected {tag!r}, got {clean_text(value)[:80]!r}")
        return value

    return BeforeValidator(check)


# ---- checks ------------------------------------------------------------------------------------
def _bound(ge: float | None, gt: float | None, le: float | None = None) -> str:
    if ge is not None and le is not None:
        return f" in {ge:g} … {le:g}"
    if gt is not None:
        return f" > {gt:g}"
    return f" ≥ {ge:g}" if ge is not None else ""


def _number_check(ge: float | None, gt: float | None, le: float | None, nullable: bool) -> Check:
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


def _whole_check(ge: int | None, nullable: bool = False) -> Check:
    words = f"expected a whole number{_bound(ge, None)}"

    def check(value: Any) -> Any:
        if value is None and nullable:
            return None
        ok = is_finite_number(value) and float(value).is_integer()
        if not ok or (ge is not None and value < ge):
            raise refuse(words)
        return int(value)

    return check


def _text_check(multiline: bool, limit: int = MAX_DOCUMENT_TEXT_CHARS) -> Check:
    def check(value: Any) -> Any:
        if not isinstance(value, str):
            raise refuse("expected text")
        return clean_text(cap_text(value, limit), multiline)

    return check


def _optional_text_check(value: Any) -> Any:
    return None if value is None else _text_check(False)(value)


def _flag_check(nullable: bool) -> Check:
    def check(value: Any) -> Any:
        if value is None and nullable:
            return None
        if not isinstance(value, bool):
            raise refuse("expected true or false")
        return value

    return check


def _each(item: Check, words: str) -> BeforeValidator:
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

    return BeforeValidator(check)


def _each_value(item: Check, words: str) -> BeforeValidator:
    """An object whose values all pass `item`; the refusal names the key."""

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

    return BeforeValidator(check)


def _any_object(value: Any) -> Any:
    if not isinstance(value, dict):
        raise refuse("expected a JSON object")
    return dict(value)


# ---- rules: the schema bound and the check, for `Annotated[T, *rules]` -------------------------
def number_rules(
    ge: float | None = None,
    gt: float | None = None,
    le: float | None = None,
    nullable: bool = False,
) -> tuple[Any, ...]:
    """A finite JSON number (not true/false, not "3"), optionally bounded; null too if
    `nullable` (what a NaN or infinity is written as)."""
    return Field(ge=ge, gt=gt, le=le), BeforeValidator(_number_check(ge, gt, le, nullable))


def whole_rules(ge: int | None = 0) -> tuple[Any, ...]:
    """A whole number (JSON 3 or 3.0, not 3.5, "3" or true), bounded below (default ≥ 0)."""
    return Field(ge=ge), BeforeValidator(_whole_check(ge))


def text_rules(multiline: bool = False, limit: int = MAX_DOCUMENT_TEXT_CHARS) -> tuple[Any, ...]:
    """Text, stripped of control characters (newlines kept only when `multiline`) and cut to
    `limit` characters ("… N more characters"): a file's text reaches labels and terminals,
    where megabytes freeze the window."""
    return (BeforeValidator(_text_check(multiline, limit)),)


def _numbers_words(ge: float | None) -> str:
    return f"expected a list of numbers{_bound(ge, None)}"


def _wholes_words(ge: int | None) -> str:
    return f"expected a list of whole numbers{_bound(ge, None)}"


# ---- the field types ---------------------------------------------------------------------------
Number = Annotated[float, *number_rules()]
NonNegative = Annotated[float, *number_rules(ge=0)]
#: A number in 0 … 1 (a share, a probability).
Fraction = Annotated[float, *number_rules(ge=0, le=1)]
NullableNumber = Annotated[float | None, *number_rules(nullable=True)]
NullableNonNegative = Annotated[float | None, *number_rules(ge=0, nullable=True)]
NullableFraction = Annotated[float | None, *number_rules(ge=0, le=1, nullable=True)]


def measured_rules(
    ge: float | None = None, le: float | None = None, null_reads_as: float = math.nan
) -> tuple[Any, ...]:
    """A number the program holds as a float even when it is not finite (NaN: not measured; inf:
    no margin): written as null, and null read back as `null_reads_as`. One definition for what
    `nan_if_none` and `x if finite else None` used to do on each side of a twin."""
    check = _number_check(ge, None, le, nullable=True)

    def read_back(value: Any) -> Any:
        if isinstance(value, float) and not math.isfinite(value):
            return value
        checked = check(value)
        return null_reads_as if checked is None else checked

    bounds: dict[str, float] = {}
    if le is not None:
        bounds["maximum"] = le
    if ge is not None:
        bounds["minimum"] = ge
    return (
        BeforeValidator(read_back),
        PlainSerializer(lambda v: v if math.isfinite(v) else None, when_used="json"),
        WithJsonSchema({"anyOf": [{**bounds, "type": "number"}, {"type": "null"}]}),
    )


#: A measured number: NaN when it could not be measured, written as null (read back as NaN).
Measured = Annotated[float, *measured_rules()]
MeasuredNonNegative = Annotated[float, *measured_rules(ge=0)]
MeasuredFraction = Annotated[float, *measured_rules(ge=0, le=1)]
#: A bound that may be unlimited: inf written as null, read back as inf (no runner-up).
UnboundedNonNegative = Annotated[float, *measured_rules(ge=0, null_reads_as=math.inf)]

Whole = Annotated[int, *whole_rules()]
PositiveWhole = Annotated[int, *whole_rules(ge=1)]

Text = Annotated[str, *text_rules()]
MultilineText = Annotated[str, *text_rules(multiline=True)]
NullableText = Annotated[str | None, BeforeValidator(_optional_text_check)]

#: true or false (not 1, not "yes").
Flag = Annotated[bool, BeforeValidator(_flag_check(False))]
#: true, false or null (e.g. a torch query this torch does not have).
NullableFlag = Annotated[bool | None, BeforeValidator(_flag_check(True))]

Numbers = Annotated[
    tuple[float, ...], _each(_number_check(None, None, None, False), _numbers_words(None))
]
NonNegatives = Annotated[
    tuple[Annotated[float, Field(ge=0)], ...],
    _each(_number_check(0, None, None, False), _numbers_words(0)),
]
#: A list of numbers where null stands for a value that was not finite.
NullableNumbers = Annotated[
    tuple[float | None, ...], _each(_number_check(None, None, None, True), _numbers_words(None))
]
Wholes = Annotated[
    tuple[Annotated[int, Field(ge=0)], ...], _each(_whole_check(0), _wholes_words(0))
]
PositiveWholes = Annotated[
    tuple[Annotated[int, Field(ge=1)], ...], _each(_whole_check(1), _wholes_words(1))
]
#: A list of texts (a single text where a list goes is refused).
Texts = Annotated[tuple[str, ...], _each(_text_check(False), "expected a list of texts")]
MultilineTexts = Annotated[tuple[str, ...], _each(_text_check(True), "expected a list of texts")]

#: An object of texts by name (parameter → gradient dtype).
TextMap = Annotated[dict[str, str], _each_value(_text_check(False), "expected text")]
#: An object of counts by name (op → casts).
WholeMap = Annotated[
    dict[str, Annotated[int, Field(ge=0)]],
    _each_value(_whole_check(0), "expected a whole number ≥ 0"),
]
#: An object of true/false by name (per mode).
FlagMap = Annotated[dict[str, bool], _each_value(_flag_check(False), "expected true or false")]
#: A JSON object kept as it is (free-form facts such as environment.extra).
AnyObject = Annotated[dict[str, Any], BeforeValidator(_any_object)]


class NotNull:
    """pydantic reads `T | None` as `T`: see Omittable."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        (inner,) = (arg for arg in get_args(source) if arg is not types.NoneType)
        return handler(inner)


#: A key that may be left out (the attribute is then None, its default) but is never null in a
#: file: the reader refuses null in T's own words and the schema does not offer it.
Omittable = Annotated[T | None, NotNull()]

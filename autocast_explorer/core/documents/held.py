"""How a part holds what its file writes in another form: keys the program derives (a route's
speedup, a sweep point's GFLOP/s), keys always or only sometimes written, per-copy values the
program keeps in a dict, lists that older files may write as null.

A part writes only the keys it was given (`dump`: an optional section that was not measured
stays absent). A key that follows from the others is derived in the part's after-validator and
marked given, so it is written whether the program or a file gave it.
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from typing import Any, ClassVar

from pydantic import BaseModel, GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from autocast_explorer.core.documents.field_types import refuse
from autocast_explorer.core.documents.model import Part

_MADE_BY_PROGRAM: ContextVar[bool] = ContextVar("made_by_program", default=False)


class DerivingPart(Part):
    """A part with keys every file has (the reader refuses a file without them, the schema lists
    them as required) that the program leaves out when it makes one: its after-validator calls
    `require_in_files()`, then derives them (`derive`) from the other fields. Listed in
    `derived_keys`, each with a default."""

    derived_keys: ClassVar[tuple[str, ...]] = ()

    def __init__(self, /, **values: Any) -> None:
        token = _MADE_BY_PROGRAM.set(True)
        try:
            super().__init__(**values)
        finally:
            _MADE_BY_PROGRAM.reset(token)

    # The program's constructor only: pydantic must not call it while reading a file (it would
    # mark the file's values as the program's).
    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]

    def require_in_files(self) -> None:
        """Read from a file (not made by the program), a derived key left out is refused."""
        if _MADE_BY_PROGRAM.get():
            return
        for name in self.derived_keys:
            if name not in self.model_fields_set:
                raise refuse("missing", at=type(self).model_fields[name].alias or name)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        json_schema = handler(schema)
        body = handler.resolve_ref_schema(json_schema)
        derived = {cls.model_fields[n].alias or n for n in cls.derived_keys}
        required = set(body.get("required", ())) | derived
        body["required"] = [key for key in body["properties"] if key in required]
        for key in derived:
            body["properties"][key].pop("default", None)
        return json_schema


def derive(part: BaseModel, **values: Any) -> None:
    """Inside `part`'s after-validator: fields set to what follows from the others, written."""
    for name, value in values.items():
        object.__setattr__(part, name, value)
    part.model_fields_set.update(values)


def write_always(part: BaseModel, *names: str) -> None:
    """Fields `names` of `part` written even when left at their defaults."""
    part.model_fields_set.update(names)


def leave_out_empty(part: BaseModel, *names: str) -> None:
    """Fields `names` of `part` not written while empty (a section only some runs have)."""
    for name in names:
        if not getattr(part, name):
            part.model_fields_set.discard(name)


class Carried:
    """`Annotated[T, Carried(), SkipJsonSchema()] = Field(default=…, exclude=True)`: what the
    program carries beside a part (a sweep point's full config), never read or written."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.any_schema()


class EmptyWhenNull:
    """`Annotated[tuple[T, ...], EmptyWhenNull()]`: a list a file may write as null (its schema
    says so), held as () by the program."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.no_info_after_validator_function(
            lambda value: () if value is None else value,
            core_schema.nullable_schema(handler(source)),
        )


class WrittenAs:
    """`Annotated[T, WrittenAs(P)]`: a value the program holds plainly, a dict by key (per mode)
    or with `pair` a tuple of P's fields in order, that the file writes as part P's object.
    Either form is validated by P. `nan_for_null`: a number that was not finite is written null
    and read back as NaN (a diverged loss); `empty_for_null`: null or {} is the empty dict."""

    def __init__(
        self,
        part: type[BaseModel],
        pair: bool = False,
        nan_for_null: bool = False,
        empty_for_null: bool = False,
    ) -> None:
        self.part = part
        self.pair = pair
        self.nan_for_null = nan_for_null
        self.empty_for_null = empty_for_null

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        part_schema = handler.generate_schema(self.part)
        names = tuple(self.part.model_fields)
        keys = tuple(info.alias or name for name, info in self.part.model_fields.items())

        def validate(value: Any, next_: core_schema.ValidatorFunctionWrapHandler) -> Any:
            if self.empty_for_null and (value is None or value == {}):
                return {}
            if self.pair and isinstance(value, tuple):
                value = dict(zip(keys, value, strict=True))
            if self.nan_for_null and isinstance(value, dict):
                value = {k: _nulls(v) for k, v in value.items()}
            part = next_(value)
            got = [
                _nans(getattr(part, n)) if self.nan_for_null else getattr(part, n) for n in names
            ]
            return tuple(got) if self.pair else dict(zip(names, got, strict=True))

        def write(value: Any) -> dict[str, Any]:
            items = zip(keys, value, strict=True) if self.pair else value.items()
            return {k: _nulls(v) for k, v in items}

        return core_schema.no_info_wrap_validator_function(
            validate,
            core_schema.nullable_schema(part_schema) if self.empty_for_null else part_schema,
            serialization=core_schema.plain_serializer_function_ser_schema(write),
        )


def _nulls(value: Any) -> Any:
    """Numbers that are not finite as null (JSON has none), in a list too."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list | tuple):
        return type(value)(_nulls(v) for v in value)
    return value


def _nans(value: Any) -> Any:
    """null read back as NaN, in a list too."""
    if value is None:
        return math.nan
    if isinstance(value, list | tuple):
        return type(value)(_nans(v) for v in value)
    return value

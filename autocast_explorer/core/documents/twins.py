"""Transitional, while the dataclass/Part twins are folded one module at a time: a folded part
may hold a child whose module still has a twin (a dataclass the program computes with and its
Part the file holds). Removed with the last twin.

`Annotated[X, HeldAs(XPart)]` is a field the program holds as X and the file holds as XPart:
read into X with `X.from_part`, written with `x.to_part()`, described by XPart's schema (its
`$defs` name included). Once X is folded (X is XPart) it is X's own field, unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema


class HeldAs:
    """The file form of a field whose program form is a not yet folded twin (see above);
    `read`/`write` when the twin has no `from_part`/`to_part` of its own."""

    def __init__(
        self,
        part: type[BaseModel],
        read: Callable[[Any], Any] | None = None,
        write: Callable[[Any], Any] | None = None,
    ) -> None:
        self.part = part
        self.read = read
        self.write = write

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        if source is self.part:
            return handler(source)
        part_schema = handler.generate_schema(self.part)
        read = self.read or source.from_part
        write = self.write or (lambda value: value.to_part())

        def validate(value: Any, next_: core_schema.ValidatorFunctionWrapHandler) -> Any:
            if isinstance(value, source):
                return value  # the program's own object
            return read(next_(value))

        return core_schema.no_info_wrap_validator_function(
            validate,
            part_schema,
            serialization=core_schema.plain_serializer_function_ser_schema(
                write, return_schema=part_schema
            ),
        )

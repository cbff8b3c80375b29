"""Typed handles: how the window finds what a feature made, by a key that carries its type.

A feature publishes each object others may use under a `Handle` it declares beside the object's
class (`PRESETS = Handle("presets", PresetBox)`); whoever needs it imports that key and gets a
`PresetBox` back, so a type checker follows every call and a renamed or missing handle fails
where it is asked for, by name, instead of as an AttributeError on the window. The handle's
name is also the window's attribute testers use (`window.presets`), published from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar, cast

T = TypeVar("T")


@dataclass(frozen=True, eq=False)
class Handle(Generic[T]):
    """The key of one published object: its name (`window.<name>` for testers) and its class
    (checked when it is published). Keys compare by identity: import the one declared."""

    name: str
    kind: type[T]


class Handles:
    """Every published object, by its handle; each name once."""

    def __init__(self) -> None:
        self._values: dict[Handle[object], object] = {}
        self._names: dict[str, object] = {}

    def publish(self, handle: Handle[T], value: T) -> T:
        """Make `value` findable by `handle`; ValueError for a name taken, TypeError for a value
        not of the handle's class."""
        if handle.name in self._names:
            raise ValueError(f"two features publish {handle.name!r}")
        if not isinstance(value, handle.kind):
            raise TypeError(f"{handle.name}: {type(value).__name__} is no {handle.kind.__name__}")
        self._values[cast(Handle[object], handle)] = value
        self._names[handle.name] = value
        return value

    def get(self, handle: Handle[T]) -> T:
        """The object published under `handle`; LookupError naming it when none was."""
        if handle not in self._values:
            raise LookupError(f"no feature published {handle.name!r}")
        return cast(T, self._values[cast(Handle[object], handle)])

    def by_name(self) -> dict[str, object]:
        """Every published object by its name, in publishing order."""
        return dict(self._names)

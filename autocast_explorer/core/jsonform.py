"""JSON pieces shared by the documents beside the result (sweeps, placements).

The strict reader lives in result.py; this module reuses it instead of copying it, and adds the
few helpers the newer documents need (latency stats both ways, size/empty/syntax checks).
"""

from __future__ import annotations

import math

from autocast_explorer.core.result import (
    JsonReader,
    ResultFormatError,
    latency_from_reader,
    latency_to_dict,
    load_document,
)

Reader = JsonReader
FormatError = ResultFormatError
latency_from = latency_from_reader
__all__ = ["FormatError", "Reader", "latency_from", "latency_to_dict", "load_document"]


def optional_number(reader: Reader, key: str) -> float | None:
    """A number that may be null (e.g. a speedup that could not be computed)."""
    if reader.data.get(key, None) is None:
        if key not in reader.data:
            raise FormatError(f"{reader._where(key)}: missing")
        return None
    return reader.number(key)


def integer(reader: Reader, key: str, minimum: int | None = None) -> int:
    """A whole number (JSON 3, not 3.5), optionally bounded below."""
    value = reader.number(key)
    if not value.is_integer() or (minimum is not None and value < minimum):
        bound = f" ≥ {minimum}" if minimum is not None else ""
        raise FormatError(f"{reader._where(key)}: expected a whole number{bound}")
    return int(value)


def nan_to_none(value: float) -> float | None:
    """JSON has no NaN: an undefined ratio is written as null."""
    return None if not math.isfinite(value) else value


def optional_bool(reader: Reader, key: str) -> bool | None:
    """true, false or null (e.g. a torch query this torch does not have)."""
    value = reader.data.get(key)
    if value is None:
        return None
    return reader.boolean(key)


def optional_text(reader: Reader, key: str) -> str | None:
    """Text or null/absent."""
    if reader.data.get(key) is None:
        return None
    return reader.text(key)

"""JSON pieces shared by the documents beside the result (sweeps, placements).

The strict reader lives in result.py; this module reuses it instead of copying it, and adds the
few helpers the newer documents need (latency stats both ways, size/empty/syntax checks).
"""

from __future__ import annotations

import json
import math
from typing import Any

from autocast_explorer.core.result import (
    MAX_RESULT_BYTES,
    JsonReader,
    ResultFormatError,
    latency_from_reader,
    latency_to_dict,
)

Reader = JsonReader
FormatError = ResultFormatError
latency_from = latency_from_reader
__all__ = ["FormatError", "Reader", "latency_from", "latency_to_dict"]


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


def load_document(text: str | bytes) -> Any:
    """Parse JSON with the same size, emptiness and syntax checks as result files."""
    if len(text) > MAX_RESULT_BYTES:
        raise FormatError(f"file is larger than {MAX_RESULT_BYTES // 2**20} MB")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(f"not valid UTF-8 ({exc})") from None
    if not text.strip():
        raise FormatError("file is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(f"not valid JSON ({exc})") from None


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

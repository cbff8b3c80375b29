"""The one strict JSON reader every document of ours builds on (results, sweeps, probes, presets).

A bad document is refused with DocumentFormatError naming the dotted path of the first bad field
(`latency.plain.median_ms: expected a number`), so every reader refuses in the same words.
"""

from __future__ import annotations

import json
import math
from typing import Any

#: Larger files are refused before parsing: no document of ours comes near this.
MAX_DOCUMENT_BYTES = 32 * 2**20


class DocumentFormatError(ValueError):
    """A document that is not what it claims to be; the message names the first bad field."""


class JsonReader:
    """Typed access to a parsed JSON object, raising DocumentFormatError with a dotted path."""

    def __init__(self, data: Any, path: str) -> None:
        if not isinstance(data, dict):
            raise DocumentFormatError(f"{path or 'document'}: expected a JSON object")
        self.data = data
        self.path = path

    def where(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def _get(self, key: str) -> Any:
        if key not in self.data:
            raise DocumentFormatError(f"{self.where(key)}: missing")
        return self.data[key]

    def obj(self, key: str) -> JsonReader:
        return JsonReader(self._get(key), self.where(key))

    def objects(self, key: str) -> list[JsonReader]:
        value = self._get(key)
        if not isinstance(value, list):
            raise DocumentFormatError(f"{self.where(key)}: expected a list")
        return [JsonReader(item, f"{self.where(key)}[{i}]") for i, item in enumerate(value)]

    def text(self, key: str) -> str:
        value = self._get(key)
        if not isinstance(value, str):
            raise DocumentFormatError(f"{self.where(key)}: expected text")
        return value

    def number(self, key: str, default: float | None = None, nullable: bool = False) -> float:
        """A number; with `nullable`, null reads as NaN (what to_json writes for NaN)."""
        if default is not None and key not in self.data:
            return default
        value = self._get(key)
        if nullable and value is None:
            return math.nan
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise DocumentFormatError(f"{self.where(key)}: expected a number")
        return float(value)

    def boolean(self, key: str) -> bool:
        value = self._get(key)
        if not isinstance(value, bool):
            raise DocumentFormatError(f"{self.where(key)}: expected true or false")
        return value

    def numbers(self, key: str, required: bool = True) -> list[float]:
        if not required and key not in self.data:
            return []
        value = self._get(key)
        if not isinstance(value, list) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in value
        ):
            raise DocumentFormatError(f"{self.where(key)}: expected a list of numbers")
        return [float(v) for v in value]


def load_document(text: str | bytes) -> Any:
    """Parse a JSON document with the checks every file of ours gets: size, UTF-8, empty, syntax.

    Shared by results, sweeps and probe files so they refuse a bad file in the same words.
    """
    if len(text) > MAX_DOCUMENT_BYTES:
        raise DocumentFormatError(f"file is larger than {MAX_DOCUMENT_BYTES // 2**20} MB")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DocumentFormatError(f"not valid UTF-8 ({exc})") from None
    if not text.strip():
        raise DocumentFormatError("file is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DocumentFormatError(f"not valid JSON ({exc})") from None


def finite_or_null(value: Any) -> Any:
    """The same structure with every NaN/±inf float replaced by None (JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_null(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_or_null(v) for v in value]
    return value


def optional_number(reader: JsonReader, key: str) -> float | None:
    """A number that may be null (e.g. a speedup that could not be computed)."""
    if reader.data.get(key, None) is None:
        if key not in reader.data:
            raise DocumentFormatError(f"{reader.where(key)}: missing")
        return None
    return reader.number(key)


def integer(reader: JsonReader, key: str, minimum: int | None = None) -> int:
    """A whole number (JSON 3, not 3.5), optionally bounded below."""
    value = reader.number(key)
    if not value.is_integer() or (minimum is not None and value < minimum):
        bound = f" ≥ {minimum}" if minimum is not None else ""
        raise DocumentFormatError(f"{reader.where(key)}: expected a whole number{bound}")
    return int(value)


def nan_to_none(value: float) -> float | None:
    """JSON has no NaN: an undefined ratio is written as null."""
    return None if not math.isfinite(value) else value


def optional_bool(reader: JsonReader, key: str) -> bool | None:
    """true, false or null (e.g. a torch query this torch does not have)."""
    value = reader.data.get(key)
    if value is None:
        return None
    return reader.boolean(key)


def optional_text(reader: JsonReader, key: str) -> str | None:
    """Text or null/absent."""
    if reader.data.get(key) is None:
        return None
    return reader.text(key)

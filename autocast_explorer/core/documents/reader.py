"""The one strict JSON reader every document of ours builds on (results, sweeps, probes, presets,
settings values).

A bad document is refused with DocumentFormatError naming the document kind and the dotted path
of the first bad field (`result: latency.plain.median_ms: expected a number ≥ 0`), so every
reader refuses in the same words. Python's json accepts `NaN`, `Infinity` and `1e999` and turns
them into floats no JSON writer can write back; here they are refused at parse time, and every
text value is stripped of control characters before it can reach a terminal or a label.
"""

from __future__ import annotations

import contextlib
import json
import math
import unicodedata
from collections.abc import Iterator
from typing import Any

#: Larger files are refused before parsing: no document of ours comes near this.
MAX_DOCUMENT_BYTES = 32 * 2**20

_ERRORS_FROM_BAD_SHAPES = (TypeError, ValueError, KeyError, AttributeError, OverflowError)


class DocumentFormatError(ValueError):
    """A document that is not what it claims to be; the message names the first bad field.

    `kind` ("result", "sweep", "preset", "probe", "settings") is set once, by the outermost
    reader (`document_kind`), and then leads the message.
    """

    def __init__(self, message: str, kind: str = "") -> None:
        super().__init__(f"{kind}: {message}" if kind else message)
        self.kind = kind
        self.detail = message


@contextlib.contextmanager
def document_kind(kind: str) -> Iterator[None]:
    """Name the document kind in any refusal raised inside (once: the outermost kind wins).

    A slip of a nested reader (a TypeError on an unexpected shape) becomes a refusal too,
    never a message about Python's internals.
    """
    try:
        yield
    except DocumentFormatError as exc:
        if exc.kind:
            raise
        raise DocumentFormatError(exc.detail, kind) from None
    except RecursionError:
        raise DocumentFormatError("nested too deeply", kind) from None
    except _ERRORS_FROM_BAD_SHAPES as exc:
        raise DocumentFormatError(f"not a valid {kind} ({_one_line(exc)})", kind) from None


def _one_line(exc: BaseException) -> str:
    """A reader's slip in words a user can act on (never `'list' object has no attribute`)."""
    if isinstance(exc, KeyError):
        return f"missing {exc}"
    text = clean_text(" ".join(str(exc).split()))
    if isinstance(exc, AttributeError | TypeError) and not text.startswith("expected"):
        return "a value has the wrong type"  # Python's own words name its internals
    return text[:200] or type(exc).__name__


def describe_slip(exc: BaseException) -> str:
    """What `document_kind` says for a reader's slip, for readers that name the path first."""
    return _one_line(exc)


def clean_text(value: str, multiline: bool = False) -> str:
    """`value` without control or format characters (terminal escapes, bidi overrides).

    Tabs become spaces; newlines stay only when `multiline`. Text from a file is shown in a
    terminal and in labels, where ESC sequences would clear the screen or retitle the window.
    """
    out = []
    for char in value:
        if char == "\n" and multiline:
            out.append(char)
        elif char in "\t\n\r":
            out.append(" ")
        elif unicodedata.category(char) in ("Cc", "Cf", "Cs"):
            continue
        else:
            out.append(char)
    return "".join(out)


#: Text shown in one line (a label, a banner, a terminal) is cut to this many characters.
MAX_SHOWN_CHARS = 2000
#: A document's text field is cut to this many characters when read (none of ours is longer).
MAX_DOCUMENT_TEXT_CHARS = 20_000


def cap_text(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    """`text` cut to `limit` characters, saying how much was left out: a 10 MB value must not
    reach a label or a terminal whole ('… 1,234 more characters')."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… {len(text) - limit:,} more characters"


def is_finite_number(value: Any) -> bool:
    """A JSON number that is finite (bool is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _bound(minimum: float | None, exclusive: bool = False) -> str:
    if minimum is None:
        return ""
    return f" > {minimum:g}" if exclusive else f" ≥ {minimum:g}"


class JsonReader:
    """Typed access to a parsed JSON object, raising DocumentFormatError with a dotted path."""

    def __init__(self, data: Any, path: str) -> None:
        if not isinstance(data, dict):
            raise DocumentFormatError(f"{path or 'document'}: expected a JSON object")
        self.data = data
        self.path = path

    def where(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def fail(self, key: str, problem: str) -> DocumentFormatError:
        """The error for `key` (raise it): its dotted path, then the problem."""
        return DocumentFormatError(f"{self.where(key)}: {problem}")

    def _get(self, key: str) -> Any:
        if key not in self.data:
            raise self.fail(key, "missing")
        return self.data[key]

    def obj(self, key: str) -> JsonReader:
        return JsonReader(self._get(key), self.where(key))

    def objects(self, key: str, required: bool = True) -> list[JsonReader]:
        if not required and self.data.get(key) is None:
            return []
        value = self._get(key)
        if not isinstance(value, list):
            raise self.fail(key, "expected a list")
        return [JsonReader(item, f"{self.where(key)}[{i}]") for i, item in enumerate(value)]

    def text(
        self,
        key: str,
        default: str | None = None,
        multiline: bool = False,
        limit: int = MAX_DOCUMENT_TEXT_CHARS,
    ) -> str:
        """Text, stripped of control characters and cut to `limit` (cap_text): a file's text
        reaches labels and terminals, where megabytes freeze the window."""
        if default is not None and key not in self.data:
            return default
        value = self._get(key)
        if not isinstance(value, str):
            raise self.fail(key, "expected text")
        return clean_text(cap_text(value, limit), multiline)

    def texts(self, key: str, required: bool = True, multiline: bool = False) -> list[str]:
        """A list of texts (a single text where a list goes is refused)."""
        if not required and key not in self.data:
            return []
        value = self._get(key)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(key, "expected a list of texts")
        return [clean_text(cap_text(v, MAX_DOCUMENT_TEXT_CHARS), multiline) for v in value]

    def number(
        self,
        key: str,
        default: float | None = None,
        nullable: bool = False,
        minimum: float | None = None,
        exclusive: bool = False,
    ) -> float:
        """A finite number, optionally bounded below; with `nullable`, null reads as NaN (what
        to_json writes for NaN)."""
        if default is not None and key not in self.data:
            return default
        value = self._get(key)
        if nullable and value is None:
            return math.nan
        if not is_finite_number(value):
            raise self.fail(key, f"expected a number{_bound(minimum, exclusive)}")
        number = float(value)
        if minimum is not None and (number <= minimum if exclusive else number < minimum):
            raise self.fail(key, f"expected a number{_bound(minimum, exclusive)}")
        return number

    def whole(self, key: str, minimum: int | None = None, default: int | None = None) -> int:
        """A whole number (JSON 3, not 3.5 or "3"), optionally bounded below."""
        if default is not None and key not in self.data:
            return default
        value = self._get(key)
        ok = is_finite_number(value) and float(value).is_integer()
        if ok and minimum is not None:
            ok = value >= minimum
        if not ok:
            raise self.fail(key, f"expected a whole number{_bound(minimum)}")
        return int(value)

    def boolean(self, key: str, default: bool | None = None) -> bool:
        if default is not None and key not in self.data:
            return default
        value = self._get(key)
        if not isinstance(value, bool):
            raise self.fail(key, "expected true or false")
        return value

    def numbers(
        self,
        key: str,
        required: bool = True,
        minimum: float | None = None,
        nullable: bool = False,
    ) -> list[float]:
        """A list of finite numbers, optionally each bounded below; with `nullable`, a null
        entry reads as NaN (what to_json writes for a value that was not finite)."""
        if not required and key not in self.data:
            return []
        value = self._get(key)
        noun = "numbers or nulls" if nullable else "numbers"
        if not isinstance(value, list) or not all(
            is_finite_number(v) or (nullable and v is None) for v in value
        ):
            raise self.fail(key, f"expected a list of {noun}{_bound(minimum)}")
        if minimum is not None and any(v is not None and v < minimum for v in value):
            raise self.fail(key, f"expected a list of {noun}{_bound(minimum)}")
        return [math.nan if v is None else float(v) for v in value]

    def wholes(self, key: str, required: bool = True, minimum: int | None = None) -> list[int]:
        """A list of whole numbers, optionally each bounded below."""
        values = self.numbers(key, required)
        if not all(v.is_integer() and (minimum is None or v >= minimum) for v in values):
            raise self.fail(key, f"expected a list of whole numbers{_bound(minimum)}")
        return [int(v) for v in values]


def _refuse_constant(name: str) -> Any:
    raise DocumentFormatError(f"not valid JSON ({name} is not a number JSON allows)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise DocumentFormatError(f"not valid JSON ({text[:40]} is out of range)")
    return value


def parse_json(text: str | bytes, max_bytes: int = MAX_DOCUMENT_BYTES) -> Any:
    """Parse strict JSON: size, UTF-8, empty, syntax, nesting, no NaN/Infinity/1e999.

    Shared by every document and by the settings; raises DocumentFormatError without a kind.
    """
    if len(text) > max_bytes:
        raise DocumentFormatError(f"file is larger than {max_bytes // 2**20} MB")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DocumentFormatError(f"not valid UTF-8 ({exc})") from None
    if not text.strip():
        raise DocumentFormatError("file is empty")
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except json.JSONDecodeError as exc:
        raise DocumentFormatError(
            f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise DocumentFormatError("nested too deeply to be a document of ours") from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        if isinstance(exc, DocumentFormatError):
            raise
        raise DocumentFormatError(f"not valid JSON ({_one_line(exc)})") from None


def load_document(text: str | bytes, kind: str = "") -> Any:
    """parse_json, with `kind` (when given) leading any refusal."""
    with document_kind(kind) if kind else contextlib.nullcontext():
        return parse_json(text)


def finite_or_null(value: Any) -> Any:
    """The same structure with every NaN/±inf float replaced by None (JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_null(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_or_null(v) for v in value]
    return value


def optional_number(reader: JsonReader, key: str, minimum: float | None = None) -> float | None:
    """A number that may be null (e.g. a speedup that could not be computed)."""
    if reader.data.get(key, None) is None:
        if key not in reader.data:
            raise reader.fail(key, "missing")
        return None
    return reader.number(key, minimum=minimum)


def integer(reader: JsonReader, key: str, minimum: int | None = None) -> int:
    """A whole number (JSON 3, not 3.5), optionally bounded below."""
    return reader.whole(key, minimum)


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

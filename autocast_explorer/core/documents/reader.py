"""The strict JSON parsing every document of ours builds on (results, sweeps, probes, presets,
settings values), and the one error they all raise.

A bad document is refused with DocumentFormatError naming the document kind and the dotted path
of the first bad field (`result: latency.plain.median_ms: expected a number ≥ 0`); the fields
are checked by each document's typed models (core/documents/model.py). Here: Python's json
accepts `NaN`, `Infinity` and `1e999` and turns them into floats no JSON writer can write back,
so they are refused at parse time, as are oversized, non-UTF-8 and empty files; and every text
value a model reads is stripped of control characters (`clean_text`) before it can reach a
terminal or a label.
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
    if value.isprintable():  # none of those (the common case, checked in C): as it is
        return value
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
        raise DocumentFormatError(f"file is larger than {size_words(max_bytes)}")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DocumentFormatError(
                f"not a text file (not UTF-8: byte {exc.object[exc.start]:#04x} at {exc.start})"
            ) from None
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


def size_words(size: int) -> str:
    """A size limit as people say it: 32 MB, 64 KB."""
    return f"{size // 2**20} MB" if size >= 2**20 else f"{size // 2**10} KB"


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


def nan_to_none(value: float) -> float | None:
    """JSON has no NaN: an undefined ratio is written as null."""
    return None if not math.isfinite(value) else value

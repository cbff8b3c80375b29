"""Layer patterns: how a config names the layers it keeps in float32 (`keep_float32`).

A pattern is a module path glob (`fc1`, `encoder.layer.*.attention`) or a class name
(`LayerNorm`). Torch-free: the config checks patterns and the window reads them while torch
loads; interventions.py matches them against a built model.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from autocast_explorer.core.experiment.config_fields import Rule

#: The config field that names the layers a run keeps in float32 (its refusals start with it).
KEEP_FIELD = "keep_float32"
#: More patterns, or longer ones, are typing slips, not experiments.
MAX_PATTERNS = 256
MAX_PATTERN_LENGTH = 500
#: Commas and white space separate patterns in typed text; a pattern holds neither.
_SEPARATORS = re.compile(r"[\s,]+")


def parse_patterns(text: str) -> tuple[str, ...]:
    """'fc1, LayerNorm encoder.*' → ('fc1', 'LayerNorm', 'encoder.*')."""
    return tuple(part for part in _SEPARATORS.split(text) if part)


def patterns_text(patterns: Iterable[str]) -> str:
    """The patterns as typed text: 'fc1, LayerNorm'."""
    return ", ".join(patterns)


def _refusal(value: Any, config: Any) -> str | None:
    if not isinstance(value, tuple | list):
        return "must be a list of layer patterns (module path globs or class names)"
    if len(value) > MAX_PATTERNS:
        return f"must be at most {MAX_PATTERNS} patterns (got {len(value)})"
    for pattern in value:
        if not isinstance(pattern, str) or not pattern:
            return f"each pattern must be non-empty text (got {pattern!r})"
        if not pattern.isprintable():
            return f"each pattern must be printable text (got {pattern!r})"
        if _SEPARATORS.search(pattern):
            return (
                "each pattern is one module path glob or class name, without commas or "
                f"spaces (got {pattern!r}; give each pattern on its own)"
            )
        if len(pattern) > MAX_PATTERN_LENGTH:
            return f"each pattern must be at most {MAX_PATTERN_LENGTH} characters"
    return None


#: The `keep_float32` field's rule and its JSON Schema.
KEEP_FLOAT32_RULE = Rule(
    _refusal,
    {
        "type": "array",
        "items": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_PATTERN_LENGTH,
            "pattern": r"^[^\s,]+$",
        },
        "maxItems": MAX_PATTERNS,
    },
)


def matches(pattern: str, name: str, kind: str) -> bool:
    """Whether `pattern` names the module at path `name` of class `kind`."""
    return kind == pattern or fnmatch.fnmatchcase(name, pattern)


def within(name: str, kept: Iterable[str]) -> bool:
    """Whether the module at path `name` is one of the `kept` modules or inside one."""
    return any(name == path or name.startswith(path + ".") for path in kept)


def covering(patterns: Sequence[str], name: str, kinds: Mapping[str, str]) -> tuple[str, ...]:
    """The patterns that keep the layer at path `name`: those naming it or a module around it
    (`kinds`: the class of each path known, e.g. a result's layer rows)."""
    parts = name.split(".")
    paths = [".".join(parts[:end]) for end in range(1, len(parts) + 1)]
    return tuple(
        pattern
        for pattern in patterns
        if any(matches(pattern, path, kinds.get(path, "")) for path in paths)
    )

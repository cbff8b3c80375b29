"""Validate the program's JSON documents against the schemas it publishes (package data).

Used by the root conftest, which checks every document the test suite makes the program write,
and by the schema tests. Documents are parsed strictly first: JSON has no NaN or Infinity, and
the schemas can only say "number", so the parser refuses those tokens.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator

from autocast_explorer.core.documents.resources import schemas_dir

#: Schema tag → the published schema file that describes it.
SCHEMA_FILES = {
    "autocast-explorer/result/1": "result.schema.json",
    "autocast-explorer/sweep/1": "sweep.schema.json",
    "autocast-explorer/ops/1": "ops.schema.json",
    "autocast-explorer/preset/1": "preset.schema.json",
    "autocast-explorer/plan/1": "plan.schema.json",
}

#: How many documents of each tag were validated in this session (the terminal summary).
VALIDATED: Counter[str] = Counter()


class SchemaViolation(AssertionError):
    """A written document does not match its published schema."""


def _no_constant(name: str) -> None:
    raise SchemaViolation(f"{name} is not JSON (non-finite numbers must be written null)")


def strict_loads(text: str) -> Any:
    return json.loads(text, parse_constant=_no_constant)


@cache
def validator(tag: str) -> Draft202012Validator:
    schema = json.loads((schemas_dir() / SCHEMA_FILES[tag]).read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def violations(document: Any, tag: str | None = None) -> list[str]:
    """Every way `document` breaks its schema ('path: message'), [] when it is valid."""
    tag = tag or (document.get("schema") if isinstance(document, dict) else None)
    if tag not in SCHEMA_FILES:
        return [f"schema: {tag!r} is not one of ours"]
    errors = sorted(validator(tag).iter_errors(document), key=lambda e: list(e.absolute_path))
    return [f"{e.json_path}: {e.message}" for e in errors]


def check_document(text: str) -> dict[str, Any]:
    """Parse and validate a written document; SchemaViolation listing what is wrong."""
    document = strict_loads(text)
    problems = violations(document)
    if problems:
        tag = document.get("schema") if isinstance(document, dict) else None
        shown = "\n  ".join(problems[:10])
        raise SchemaViolation(f"a written {tag} document breaks its schema:\n  {shown}")
    VALIDATED[document["schema"]] += 1
    return document

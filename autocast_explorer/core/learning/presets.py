"""Presets: named, described experiment configs (and optional sweeps) stored as JSON.

A preset is data a learner may edit or receive from someone else, so loading it is treated like
any untrusted file: JSON only (never executed), size-limited, schema-tagged, every key known and
the config validated by ExperimentConfig. Anything wrong raises PresetError naming the file and
the problem, so the window can show it and fall back. No torch import here: the window lists
presets while torch is still loading.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PrivateAttr,
    WithJsonSchema,
    model_validator,
)

from autocast_explorer.core.documents.field_types import refuse
from autocast_explorer.core.documents.files import not_a_regular_file, write_atomic
from autocast_explorer.core.documents.model import (
    Part,
    SchemaWhenMade,
    def_ref,
    dump,
    read,
    schema,
)
from autocast_explorer.core.documents.reader import (
    DocumentFormatError,
    cap_text,
    clean_text,
    parse_json,
)
from autocast_explorer.core.documents.resources import presets_dir
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.config_schema import config_schema
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.core.sweeps.spec import SweepSpec, sweep_params

SCHEMA = "autocast-explorer/preset/1"
MAX_PRESET_BYTES = 64 * 1024
MAX_NAME_CHARS = 80
MAX_DESCRIPTION_CHARS = 600
MIN_SWEEP_POINTS = 2
TUTORIAL_ID = "tutorial"

_TOP_LEVEL_KEYS = frozenset({"schema", "name", "description", "config", "sweep"})
_CONFIG_KEYS = frozenset(f.name for f in dataclasses.fields(ExperimentConfig))
_SWEEP_KEYS = frozenset({"param", "values", "width_values"})


class PresetError(DocumentFormatError):
    """A preset file (or preset data) is unusable; the message names the source (a preset file,
    or `preset 'name'`) and the problem, with the field path."""

    def __init__(self, source: str, problem: str) -> None:
        super().__init__(problem, "preset")
        self.args = (f"{clean_text(source)}: {problem}",)
        self.source = source
        self.problem = problem

    def __str__(self) -> str:
        return str(self.args[0])


def parse_preset(
    text: str | bytes, source: str = "preset", preset_id: str = "preset", builtin: bool = False
) -> Preset:
    """Validate a preset document; `source` (usually the path) prefixes every error message."""
    try:
        data = parse_json(text, MAX_PRESET_BYTES)
    except DocumentFormatError as exc:
        raise PresetError(source, exc.detail) from None
    return preset_from_dict(data, source, preset_id, builtin)


def preset_from_dict(
    data: Any, source: str = "preset", preset_id: str = "preset", builtin: bool = False
) -> Preset:
    """Check the parsed JSON (every key known, the config through ExperimentConfig): the
    Preset, `preset_id` its id."""
    try:
        preset = read(Preset, data, "preset")
    except DocumentFormatError as exc:
        raise PresetError(source, exc.detail.removeprefix("document: ")) from None
    return preset.located(preset_id, builtin=builtin)


# ---- the document, defined once: reading, writing and the published schema --------------------
def _json_type(value: Any) -> str:
    names = {list: "a list", str: "a string", bool: "true/false", type(None): "null"}
    return names.get(type(value), "a number")


def _keys(keys: Iterable[str]) -> str:
    return ", ".join(sorted(keys))


def _text(limit: int, single_line: bool) -> Any:
    """A non-empty text of at most `limit` characters, stripped (the list shows it)."""

    def check(value: Any) -> Any:
        if isinstance(value, str):
            value = clean_text(value, multiline=True)
        if not isinstance(value, str) or not value.strip():
            raise refuse("missing or not a non-empty string")
        if len(value) > limit:
            raise refuse(f"longer than {limit} characters")
        if single_line and "\n" in value:
            raise refuse("must be a single line")
        return value.strip()

    return check


def _config(value: Any) -> Any:
    if not isinstance(value, dict):
        raise refuse(f"expected a JSON object, got {_json_type(value)}")
    unknown = sorted(set(value) - _CONFIG_KEYS)
    if unknown:
        raise refuse(f"unknown field {unknown[0]!r}")
    try:
        return ExperimentConfig.from_dict(value)
    except ConfigError as exc:
        raise refuse(exc.rule, at=exc.field) from None
    except TypeError as exc:
        raise refuse(clean_text(str(exc))) from None


def _sweep(value: Any) -> Any:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise refuse(f"expected a JSON object, got {_json_type(value)}")
    unknown = sorted(set(value) - _SWEEP_KEYS)
    if unknown:
        raise refuse(f"unknown key {unknown[0]!r} (allowed: param, values, width_values)")
    values = value.get("values")
    width_values = value.get("width_values", [])
    if not isinstance(values, list):
        raise refuse("expected a list of whole numbers", at="values")
    if not isinstance(width_values, list):
        raise refuse("expected a list of whole numbers", at="width_values")
    if len(set(map(repr, values))) < MIN_SWEEP_POINTS:
        raise refuse(f"needs at least {MIN_SWEEP_POINTS} distinct values", at="values")
    # Any JSON value: SweepSpec refuses what is not a param's name, in its own words.
    param: Any = value.get("param")
    try:
        return SweepSpec(param, tuple(values), tuple(width_values))
    except ConfigError as exc:
        raise refuse(exc.rule, at=exc.field) from None


_WHOLE = {"type": "integer", "minimum": 1}


def _sweep_schema() -> dict[str, Any]:
    """The preset's `sweep`, its `param` enum from the family registry as it is now."""
    return {
        "anyOf": [
            {"type": "null"},
            {
                "type": "object",
                "properties": {
                    "param": {"enum": list(sweep_params())},
                    "values": {
                        "description": "at least 2 distinct values (repeats are dropped)",
                        "type": "array",
                        "items": _WHOLE,
                        "minItems": 2,
                    },
                    "width_values": {
                        "description": "a batch × width grid's widths",
                        "type": "array",
                        "items": _WHOLE,
                    },
                },
                "required": ["param", "values"],
                "additionalProperties": False,
            },
        ]
    }


class Preset(Part):
    """A named, described experiment config and optional sweep (built-in presets, the window's
    saved presets, `run --preset FILE`). Loading is strict: at most 64 KB, every key known, the
    config validated like any other."""

    # Where it lives is not in the file: `id` is the file stem ('tutorial'), `path` the file
    # (None: not loaded from one), `builtin` whether it ships with the program (`located`).
    model_config = ConfigDict(extra="forbid")

    schema_: Annotated[str, Field(alias="schema")]
    name: Annotated[
        str,
        BeforeValidator(_text(MAX_NAME_CHARS, single_line=True)),
        WithJsonSchema(
            {
                "type": "string",
                "pattern": "^[^\\n]*\\S[^\\n]*$",
                "maxLength": MAX_NAME_CHARS,
                "description": "one line, what the preset list shows",
            }
        ),
    ]
    description: Annotated[
        str,
        BeforeValidator(_text(MAX_DESCRIPTION_CHARS, single_line=False)),
        WithJsonSchema({"type": "string", "pattern": "\\S", "maxLength": MAX_DESCRIPTION_CHARS}),
    ]
    config: Annotated[
        ExperimentConfig,
        BeforeValidator(_config),
        PlainSerializer(lambda config: config.to_dict()),
        def_ref("config"),
    ]
    sweep: Annotated[
        SweepSpec | None,
        BeforeValidator(_sweep),
        PlainSerializer(lambda sweep: None if sweep is None else sweep.to_dict()),
        SchemaWhenMade(_sweep_schema),
        Field(exclude_if=lambda sweep: sweep is None),
    ] = None
    _id: str = PrivateAttr("preset")
    _path: Path | None = PrivateAttr(None)
    _builtin: bool = PrivateAttr(False)

    @model_validator(mode="before")
    @classmethod
    def _a_preset(cls, data: Any) -> Any:
        """What the file is before its fields: an object, tagged as a preset, every key known."""
        if not isinstance(data, dict):
            raise refuse(f"expected a JSON object, got {_json_type(data)}")
        schema_tag = data.get("schema")
        if schema_tag is None:
            raise refuse(f"not an Autocast Explorer preset (no 'schema': {SCHEMA!r})")
        if schema_tag != SCHEMA:
            hint = " (this is a result file, not a preset)" if "result" in str(schema_tag) else ""
            raise refuse(f"schema {clean_text(str(schema_tag))[:80]!r} is not {SCHEMA!r}{hint}")
        unknown = sorted(set(data) - _TOP_LEVEL_KEYS)
        if unknown:
            raise refuse(f"unknown key {unknown[0]!r} (allowed: {_keys(_TOP_LEVEL_KEYS)})")
        for key in ("name", "description"):
            if key not in data:
                raise refuse("missing or not a non-empty string", at=key)
        return data

    @model_validator(mode="after")
    def _sweep_fits_the_model(self) -> Preset:
        """A sweep of a parameter the model has not is refused here."""
        if self.sweep is not None:
            try:
                self.sweep.plan(self.config)
            except ConfigError as exc:
                raise refuse(exc.rule, at=f"sweep.{exc.field}") from None
        return self

    def located(self, preset_id: str, path: Path | None = None, builtin: bool = False) -> Preset:
        """This preset as the one with id `preset_id` (its file's stem) in `path`."""
        found = self.model_copy()
        found._id, found._path, found._builtin = preset_id, path, builtin
        return found

    @property
    def id(self) -> str:
        return self._id

    @property
    def path(self) -> Path | None:
        return self._path

    @property
    def builtin(self) -> bool:
        return self._builtin

    @property
    def is_tutorial(self) -> bool:
        return self.id == TUTORIAL_ID

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (schema tag first); `id`, `path` and `builtin` come from where it lives."""
        return dump(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"


def preset_schema() -> dict[str, Any]:
    """The published schema of the preset document (tools/write_schemas.py writes it)."""
    return schema(
        Preset,
        SCHEMA,
        "Autocast Explorer preset",
        "A named, described experiment config and optional sweep (built-in presets, the "
        "window's saved presets, `run --preset FILE`). Loading is strict: at most 64 KB, every "
        "key known, the config validated like any other.",
        defs={"config": config_schema(closed=True)},
    )


def load_preset(path: str | os.PathLike[str], builtin: bool = False) -> Preset:
    """Read and validate one preset file; its id is the file name without `.json`."""
    target = Path(path)
    source = cap_text(clean_text(str(target)), 200)
    try:
        problem = not_a_regular_file(target)
        if problem:
            raise PresetError(source, problem)
        with target.open("rb") as handle:
            raw = handle.read(MAX_PRESET_BYTES + 1)
    except OSError as exc:
        raise PresetError(source, f"cannot read: {exc.strerror or exc}") from None
    return parse_preset(raw, source, target.stem, builtin).located(target.stem, target, builtin)


def sort_presets(presets: Iterable[Preset]) -> list[Preset]:
    """Tutorial first (it is where a learner starts), then by name."""
    return sorted(presets, key=lambda p: (not p.is_tutorial, p.name.casefold(), p.id))


def scan_presets(
    directory: str | os.PathLike[str], builtin: bool = False
) -> tuple[list[Preset], list[PresetError]]:
    """Every `*.json` in `directory`, sorted, plus one error per unusable file (never raises).

    A missing folder is simply empty: a user who never saved a preset has none.
    """
    folder = Path(directory)
    presets: list[Preset] = []
    errors: list[PresetError] = []
    try:
        paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
    except OSError as exc:
        return [], [PresetError(str(folder), f"cannot list: {exc.strerror or exc}")]
    for path in paths:
        try:
            presets.append(load_preset(path, builtin))
        except PresetError as exc:
            errors.append(exc)
    return sort_presets(presets), errors


def builtin_presets() -> list[Preset]:
    """The presets shipped in resources/presets, sorted, tutorial first.

    Raises PresetError if one is broken or the folder is missing: those files ship with the
    program, so a problem there is a packaging bug to report, not a user mistake to skip.
    """
    folder = presets_dir()
    if not folder.is_dir():
        raise PresetError(str(folder), "built-in presets folder not found")
    presets, errors = scan_presets(folder, builtin=True)
    if errors:
        raise errors[0]
    if not presets:
        raise PresetError(str(folder), "no built-in presets (*.json) found")
    return presets


def find_preset(presets: Iterable[Preset], key: str) -> Preset:
    """The preset whose id or name is `key` (case-insensitive); KeyError listing the choices."""
    items = list(presets)
    wanted = key.strip().casefold()
    for preset in items:
        if wanted in (preset.id.casefold(), preset.name.casefold()):
            return preset
    raise KeyError(f"no preset {key!r}; choose one of: {', '.join(p.id for p in items)}")


def user_presets_dir() -> Path:
    """Where the window saves a user's own presets ($XDG_CONFIG_HOME/autocast-explorer/presets)."""
    base = os.environ.get("XDG_CONFIG_HOME", "").strip() or str(Path.home() / ".config")
    return Path(base) / "autocast-explorer" / "presets"


def preset_filename(name: str) -> str:
    """A safe file name for a preset name: its letters and digits in any script, lower-case,
    joined by dashes, plus .json ('日本' → 日本.json). A name with none ('🙂', '!!!') gets
    'preset-' and a short hash of the name, so different names never share a file."""
    slug = re.sub(r"[\W_]+", "-", name.casefold()).strip("-")[:60].strip("-")
    if not slug:
        slug = "preset-" + hashlib.sha1(name.encode("utf-8")).hexdigest()[:10]
    return f"{slug}.json"


def make_preset(
    name: str,
    description: str,
    config: ExperimentConfig,
    sweep: SweepSpec | None = None,
) -> Preset:
    """A new user preset, validated exactly as a loaded one would be."""
    data: dict[str, Any] = {
        "schema": SCHEMA,
        "name": name,
        "description": description,
        "config": config.to_dict(),
    }
    if sweep is not None:
        data["sweep"] = sweep.to_dict()
    return preset_from_dict(data, f"preset {name!r}", preset_filename(name).removesuffix(".json"))


def save_preset(preset: Preset, path: str | os.PathLike[str]) -> Path:
    """Write a preset atomically (temp file + rename), so a crash mid-save loses nothing."""
    text = preset.to_json()
    if len(text.encode("utf-8")) > MAX_PRESET_BYTES:
        raise PresetError(str(path), f"preset would be larger than {MAX_PRESET_BYTES // 1024} KB")
    try:
        return write_atomic(path, text)
    except OSError as exc:
        raise PresetError(str(path), f"cannot write: {exc.strerror or exc}") from None

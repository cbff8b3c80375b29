"""Model spec strings: which model a user means, parsed without torch or importing anything.

`hf:TYPE`, `torchvision:NAME`, `timm:NAME`, `package.module:factory` and `path/to/file.py:factory`.
The registered family names (mlp, cnn …) are not specs. Parsing checks only the
shape of the text; whether the library, file or factory exists is found out when it is built.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from autocast_explorer.core.experiment.config_rules import (
    MAX_SPEC_LENGTH,
    not_a_model,
    saved_model_refusal,
    spec_usage,
)
from autocast_explorer.core.runtime.errors import ConfigError

LIBRARIES: tuple[str, ...] = ("hf", "torchvision", "timm")
#: A model name a library knows: letters, digits, `_`, `-`, `.` (timm's `vit_small.augreg`).
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
#: The factory a file's spec names when the file does not say otherwise (the docs' examples).
DEFAULT_FACTORY = "build"
#: A file larger than this is not read for its factory names (a model file is a few kB).
FACTORY_SCAN_BYTES = 1_000_000


@dataclass(frozen=True)
class ModelSpec:
    """A parsed spec: `kind` is one of LIBRARIES, "module" or "file"; `target` the library's model
    name, the dotted module or the file path; `factory` the callable's name (module/file only)."""

    text: str
    kind: str
    target: str
    factory: str = ""

    @property
    def is_library(self) -> bool:
        return self.kind in LIBRARIES

    @property
    def short(self) -> str:
        """How titles name it: the spec with a file's folders left out."""
        if self.kind == "file":
            return f"{_file_name(self.target)}:{self.factory}"
        return self.text


def _file_name(path: str) -> str:
    return re.split(r"[/\\]", path)[-1]


def is_user_spec(model: str) -> bool:
    """Whether `model` names a user model (it holds a ':'), as opposed to a built-in family."""
    return isinstance(model, str) and ":" in model


def parse_spec(text: str) -> ModelSpec:
    """The spec in `text`, or ConfigError('model', …) saying what a spec looks like."""
    if not isinstance(text, str) or not text.strip():
        raise ConfigError("model", "is empty")
    text = text.strip()
    if len(text) > MAX_SPEC_LENGTH:
        raise ConfigError("model", f"a spec has at most {MAX_SPEC_LENGTH} characters")
    if ":" not in text:
        raise ConfigError("model", not_a_model(text))
    prefix, _, name = text.partition(":")
    if prefix in LIBRARIES:
        if not _NAME.match(name) or "/" in name:
            raise ConfigError(
                "model",
                f"{text!r}: {prefix}: takes a model name without a hub path "
                "(nothing is downloaded), e.g. hf:bert, torchvision:resnet18, timm:resnet18",
            )
        return ModelSpec(text, prefix, name)
    target, _, factory = text.rpartition(":")
    saved = saved_model_refusal(text)
    if saved:
        raise ConfigError("model", saved)
    if not _IDENTIFIER.match(factory):
        raise ConfigError(
            "model", f"{text!r}: {factory!r} is not a Python name; {spec_usage(text)}"
        )
    if target.endswith(".py"):
        return ModelSpec(text, "file", target, factory)
    if _MODULE.match(target):
        return ModelSpec(text, "module", target, factory)
    raise ConfigError("model", f"{text!r}: {target!r} is neither a .py file nor a module path")


def model_file(text: str) -> str | None:
    """The absolute path of a file spec's file (None for other specs and family names)."""
    import os

    if not is_user_spec(text):
        return None
    try:
        spec = parse_spec(text)
    except ConfigError:
        return None
    if spec.kind != "file":
        return None
    return os.path.realpath(os.path.abspath(os.path.expanduser(spec.target)))


def file_factory(path: str, typed: str = "") -> str:
    """The factory a spec of the file at `path` should name, read without running it (`ast`):
    `typed` if the file defines it, else `build` if it does, else its first top-level public
    function; `build` when the file defines none or cannot be read."""
    try:
        with open(path, "rb") as f:
            source = f.read(FACTORY_SCAN_BYTES + 1)
        if len(source) > FACTORY_SCAN_BYTES:
            return typed or DEFAULT_FACTORY
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return typed or DEFAULT_FACTORY
    defined = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
    ]
    for wanted in (typed, DEFAULT_FACTORY):
        if wanted and wanted in defined:
            return wanted
    return defined[0] if defined else typed or DEFAULT_FACTORY

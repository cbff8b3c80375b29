"""Build the module a spec names, with random weights and without the network.

Importing a user's module runs its code (docs/models.md, "Trust"): that is the point of a
factory, and the reason the window asks before a new file. Nothing here downloads: Hugging Face
architectures are built from their default config (`AutoConfig.for_model` → `from_config`),
torchvision with `weights=None`, timm with `pretrained=False`, and an argument asking any of them
for trained weights is refused (DOWNLOADING_ARGS); a factory's arguments are the user's own.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from autocast_explorer.core.documents.files import not_a_regular_file
from autocast_explorer.core.experiment.families.user.errors import (
    UserModelError,
    error_line,
)
from autocast_explorer.core.experiment.families.user.guard import UserCode, user_paths
from autocast_explorer.core.experiment.families.user.spec import ModelSpec, parse_spec
from autocast_explorer.core.experiment.families.user.stated import (
    StatedInput,
    factory_stated,
    hf_stated,
    refuse_two_towers,
)
from autocast_explorer.core.experiment.input_record import first_argument

#: Set before transformers is imported: it then never reaches for the hub.
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}
#: Arguments that ask a library for trained weights, refused with one line by every library
#: spec (hf:, torchvision:, timm:): each is built with random weights, and an hf: config would
#: keep `pretrained=true` as a silent attribute. A factory of the user's gets them as given.
DOWNLOADING_ARGS = ("weights", "weights_backbone", "pretrained", "use_pretrained_backbone")
#: What torchvision classifiers take (the default input when the library does not say).
TORCHVISION_INPUT = (3, 224, 224)
#: The instance attribute holding how one batch reaches the model (inputs.Feed): the output
#: adapter hands the batch on by name, with what is fed beside it.
FEED_ATTRIBUTE = "_autocast_explorer_feed"


@dataclass
class Loaded:
    """A built module and what came with it: what it states it takes (stated.py), the
    factory's example input, a file's sha256, the paths that count as the user's code for
    tracebacks."""

    module: torch.nn.Module
    stated: StatedInput
    example: torch.Tensor | None = None
    sha256: str | None = None
    user_paths: tuple[str, ...] = field(default_factory=tuple)


def library_missing(library: str, exc: BaseException) -> str:
    """One line: what failed importing `library` and what to install instead."""
    cpu = "--index-url https://download.pytorch.org/whl/cpu"
    fixes = {
        "transformers": "pip install 'autocast-explorer[models]'",
        "torchvision": f"pip install torchvision matching torch {torch.__version__} ({cpu})",
        "timm": f"pip install timm, and a torchvision matching torch {torch.__version__} ({cpu})",
    }
    return f"import {library} failed ({error_line(exc)}); {fixes[library]}"


def _import_library(spec: ModelSpec, name: str) -> Any:
    if name == "transformers":
        for key, value in OFFLINE_ENV.items():
            os.environ.setdefault(key, value)
    try:
        return importlib.import_module(name)
    except Exception as exc:  # a CUDA torchvision raises RuntimeError, a missing one ImportError
        raise UserModelError(spec.text, library_missing(name, exc)) from None


def _refuse_downloads(spec: ModelSpec, kwargs: Mapping[str, Any]) -> None:
    for key in DOWNLOADING_ARGS:
        if kwargs.get(key) not in (None, False, "None", ""):
            raise UserModelError(
                spec.text, f"--model-arg {key}=… would download weights; nothing is downloaded"
            )


def _hf(spec: ModelSpec, kwargs: dict[str, Any]) -> Loaded:
    _refuse_downloads(spec, kwargs)
    transformers = _import_library(spec, "transformers")
    known = transformers.models.auto.configuration_auto.CONFIG_MAPPING
    if spec.target not in known:
        raise UserModelError(
            spec.text,
            f"transformers {transformers.__version__} knows no model type {spec.target!r} "
            f"({len(list(known.keys()))} types, e.g. bert, gpt2, vit, resnet, mobilenet_v2)",
        )
    try:
        config = transformers.AutoConfig.for_model(spec.target, **kwargs)
    except Exception as exc:
        raise UserModelError(
            spec.text,
            f"{error_line(exc)} (hf: takes a model type such as bert, gpt2, vit, resnet; "
            "built from its default config, nothing is downloaded)",
        ) from None
    refuse_two_towers(spec.text, config, known)
    # Vision classifiers get their classification head (logits); others their base model.
    image_classes = transformers.models.auto.modeling_auto.MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING
    auto = (
        transformers.AutoModelForImageClassification
        if type(config) in image_classes
        else transformers.AutoModel
    )
    with UserCode(spec.text, "building it", ()):
        module = auto.from_config(config)
    return Loaded(module, hf_stated(config, module))


def _torchvision(spec: ModelSpec, kwargs: dict[str, Any]) -> Loaded:
    _refuse_downloads(spec, kwargs)
    torchvision = _import_library(spec, "torchvision")
    with UserCode(spec.text, "building it", ()):
        module = torchvision.models.get_model(spec.target, weights=None, **kwargs)
    return Loaded(module, StatedInput(first_argument(module), "pixels", TORCHVISION_INPUT))


def _timm(spec: ModelSpec, kwargs: dict[str, Any]) -> Loaded:
    _refuse_downloads(spec, kwargs)
    timm = _import_library(spec, "timm")
    with UserCode(spec.text, "building it", ()):
        module = timm.create_model(spec.target, pretrained=False, **kwargs)
    cfg = getattr(module, "pretrained_cfg", None) or {}
    size = cfg.get("input_size") if isinstance(cfg, Mapping) else None
    stated = tuple(int(s) for s in size) if isinstance(size, list | tuple) else None
    return Loaded(module, StatedInput(first_argument(module), "pixels", stated))


@contextlib.contextmanager
def _on_path(folder: str) -> Iterator[None]:
    """`folder` first on sys.path while the user's code imports (its sibling modules resolve)."""
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(folder)


def file_sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _import_user(spec: ModelSpec) -> tuple[Any, tuple[str, ...], str | None]:
    """The module holding the factory, the paths of the user's code, a file's sha256."""
    if spec.kind == "file":
        (path,) = user_paths(spec.text)
        why = not_a_regular_file(Path(path))  # asked without opening: a FIFO would block
        if why:
            raise UserModelError(spec.text, f"{path}: {why}")
        digest = file_sha256(path)
        name = f"autocast_explorer_user_{digest[:16]}"
        if name in sys.modules:
            return sys.modules[name], (path,), digest
        loader_spec = importlib.util.spec_from_file_location(name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise UserModelError(spec.text, f"{path} cannot be imported as Python")
        module = importlib.util.module_from_spec(loader_spec)
        try:
            with UserCode(spec.text, "importing it", (path,)), _on_path(os.path.dirname(path)):
                sys.modules[name] = module
                loader_spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return module, (path,), digest
    with UserCode(spec.text, "importing it", (os.getcwd(),)), _on_path(os.getcwd()):
        module = importlib.import_module(spec.target)
    return module, user_paths(spec.text), None


def _factory(spec: ModelSpec, kwargs: dict[str, Any]) -> Loaded:
    holder, paths, digest = _import_user(spec)
    factory = getattr(holder, spec.factory, None)
    if not callable(factory):
        raise UserModelError(spec.text, f"{spec.factory!r} is not a callable in {spec.target}")
    with UserCode(spec.text, f"calling {spec.factory}", paths):
        made = factory(**kwargs)
    example = None
    if isinstance(made, tuple) and len(made) == 2:
        made, example = made
        if not isinstance(example, torch.Tensor):
            raise UserModelError(
                spec.text,
                f"{spec.factory} returned (module, {type(example).__name__}): the example input "
                "must be a tensor with the batch dimension first",
            )
    if not isinstance(made, torch.nn.Module):
        raise UserModelError(
            spec.text,
            f"{spec.factory} returned {type(made).__name__}, not an nn.Module or "
            "(nn.Module, example_input)",
        )
    stated = factory_stated(made, example)
    return Loaded(made, stated, example=example, sha256=digest, user_paths=paths)


_BUILDERS = {"hf": _hf, "torchvision": _torchvision, "timm": _timm}


def load(text: str, model_args: Mapping[str, Any] | tuple[tuple[str, Any], ...] = ()) -> Loaded:
    """Build the module `text` names (seed torch first: the weights come from its RNG)."""
    spec = parse_spec(text)
    kwargs = {k: list(v) if isinstance(v, tuple) else v for k, v in dict(model_args).items()}
    loaded = _BUILDERS.get(spec.kind, _factory)(spec, kwargs)
    if spec.kind in _BUILDERS:
        loaded.user_paths = ()
    adapt_output(loaded.module)
    return loaded


def main_tensor(output: Any) -> Any:
    """The tensor a model's output stands for: itself, `logits` or `last_hidden_state` of a
    Hugging Face output, else the first tensor inside a mapping, tuple or list."""
    if isinstance(output, torch.Tensor):
        return output
    if isinstance(output, Mapping):
        for key in ("logits", "last_hidden_state"):
            value = output.get(key)
            if isinstance(value, torch.Tensor):
                return value
        output = tuple(output.values())
    if isinstance(output, tuple | list):
        for item in output:
            found = main_tensor(item)
            if isinstance(found, torch.Tensor):
                return found
    return output


_ADAPTED: dict[type, type] = {}


def adapt_output(module: torch.nn.Module) -> torch.nn.Module:
    """Make `module(x)` return one tensor (main_tensor of its output) so every path that reads
    logits reads this model, and hand `x` on as the module's feed says (FEED_ATTRIBUTE: by
    name, with a decoder input beside it). A subclass with that forward, not a wrapper module:
    layer names stay the model's own (no 'model.' prefix) and copies (training) stay adapted."""
    cls = type(module)
    if cls in _ADAPTED.values():
        return module
    adapted = _ADAPTED.get(cls)
    if adapted is None:

        def forward(self: torch.nn.Module, *args: Any, **kwargs: Any) -> Any:
            feed = getattr(self, FEED_ATTRIBUTE, None)
            if feed is not None and len(args) == 1 and not kwargs:
                args, kwargs = feed.arguments(args[0])
            return main_tensor(cls.forward(self, *args, **kwargs))

        adapted = type(
            cls.__name__,
            (cls,),
            {"forward": forward, "__module__": cls.__module__, "__qualname__": cls.__qualname__},
        )
        _ADAPTED[cls] = adapted
    module.__class__ = adapted
    return module


def module_class_name(module: torch.nn.Module) -> str:
    """The model's own class (not the output adapter)."""
    cls = type(module)
    return cls.__mro__[1].__name__ if cls in _ADAPTED.values() else cls.__name__


#: Specs shown as completions before anything was run (all build offline here).
EXAMPLE_SPECS: tuple[str, ...] = (
    "hf:bert",
    "hf:gpt2",
    "hf:vit",
    "hf:resnet",
    "hf:mobilenet_v2",
    "autocast_explorer.examples.my_model:build",
)


@dataclass(frozen=True)
class LibraryNames:
    """Completions from torchvision and timm, and one line saying which gave none and why."""

    names: tuple[str, ...]
    hint: str = ""  # '' when both libraries imported


#: The libraries whose model names are completed, with how each lists them.
_LISTED: tuple[tuple[str, Callable[[Any], Iterable[str]]], ...] = (
    ("torchvision", lambda lib: lib.models.list_models()),
    ("timm", lambda lib: lib.list_models()),
)


def library_model_names(limit: int = 5000) -> LibraryNames:
    """`torchvision:NAME` and `timm:NAME` for the libraries that import here (completion);
    a library that is missing or fails to import contributes no names and its line to the
    hint: what failed and what to install (the run's own words)."""
    names: list[str] = []
    missing: list[str] = []
    for library, listing in _LISTED:
        try:
            module = importlib.import_module(library)
            names += [f"{library}:{n}" for n in listing(module)]
        except Exception as exc:  # absent (ImportError) or a CUDA build (RuntimeError)
            missing.append(library_missing(library, exc))
    hint = ""
    if missing:
        hint = "No torchvision:/timm: names to complete: " + "; ".join(missing)
    return LibraryNames(tuple(names[:limit]), hint)

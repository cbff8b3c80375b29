"""Changing what precision chosen layers compute in: keep them in float32 under autocast, or
lower only them in an otherwise float32 forward.

A layer is named by a pattern: a module path glob (`encoder.layer.*.attention`, `fc1`) or a
class name (`LayerNorm`). Inside a kept layer autocast is disabled and its floating inputs are
made float32 again (a bfloat16 input into a float32 Linear would raise); outside autocast it
runs as it is, so a float32 side pays nothing for it. A layer lowered alone gives float32
back, so the float32 layers after it still run.

Wrapping `forward` (as runtime/wrapping.py does), not hooks: hooks cannot hold a context open
around the call when it raises, and torch's fused transformer kernel refuses hooked layers.
`torch.compile` traces the wrapped forward, autocast's enter and exit included.

A run keeps the config's `keep_float32` layers (`keeping`) for as long as it measures a model
it built, and gives the model back as it was (a user's factory may hand out one shared
module); the copies training makes are the run's own and keep their layers for good
(`kept_copy`).
"""

from __future__ import annotations

import contextlib
import copy
import difflib
from collections.abc import Callable, Iterator, Sequence
from typing import cast

import torch
from torch.utils import _pytree as pytree

from autocast_explorer.core.experiment.layer_patterns import KEEP_FIELD, matches
from autocast_explorer.core.runtime.errors import ConfigError


class NoLayerMatched(ValueError):
    """A pattern named no module of the model; the message lists the nearest module paths."""


def module_paths(model: torch.nn.Module) -> tuple[str, ...]:
    """Every module's dotted path below the model (the model itself has none)."""
    return tuple(name for name, _ in model.named_modules() if name)


def nearest_paths(model: torch.nn.Module, pattern: str, count: int = 5) -> list[str]:
    """The module paths (and class names) closest to a pattern that matched nothing: the close
    ones first, then the paths most alike, so there are always `count` to choose from (or every
    path of a smaller model)."""
    names = list(module_paths(model))
    classes = sorted({type(module).__name__ for _, module in model.named_modules()})
    near = difflib.get_close_matches(pattern, names + classes, n=count, cutoff=0.4)

    def likeness(name: str) -> float:
        return difflib.SequenceMatcher(None, pattern, name).ratio()

    rest = sorted((name for name in names if name not in near), key=likeness, reverse=True)
    return (near + rest)[:count]


def match_layers(model: torch.nn.Module, patterns: Sequence[str]) -> tuple[str, ...]:
    """The paths of the modules the patterns name, in the model's order, each once.

    A module inside a matched one is not listed again (the outer one's scope covers it).
    Raises NoLayerMatched for the first pattern that names no module.
    """
    matched: list[str] = []
    for pattern in patterns:
        found = [
            name
            for name, mod in model.named_modules()
            if name and matches(pattern, name, type(mod).__name__)
        ]
        if not found:
            near = ", ".join(nearest_paths(model, pattern))
            raise NoLayerMatched(f"{pattern!r} matches no layer; nearest: {near}")
        matched.extend(name for name in found if name not in matched)
    order = {name: index for index, name in enumerate(module_paths(model))}
    outermost = [
        name
        for name in matched
        if not any(name.startswith(other + ".") for other in matched if other != name)
    ]
    return tuple(sorted(outermost, key=order.__getitem__))


def _as_float32(value: object) -> object:
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.float()
    return value


def _float32_tree(tree: object) -> object:
    return pytree.tree_map(_as_float32, tree)


AroundCall = Callable[[Callable[..., object], tuple[object, ...], dict[str, object]], object]


@contextlib.contextmanager
def around_layers(
    model: torch.nn.Module, names: Sequence[str], around: AroundCall
) -> Iterator[None]:
    """Route the named modules' calls through `around(forward, args, kwargs)` inside the block;
    their forwards are restored after it (an instance `forward` set before is kept)."""
    modules = dict(model.named_modules())
    saved: list[tuple[torch.nn.Module, Callable[..., object] | None]] = []
    try:
        for name in names:
            module = modules[name]
            original = module.forward
            saved.append((module, module.__dict__.get("forward")))

            def forward(
                *args: object, _original: Callable[..., object] = original, **kwargs: object
            ) -> object:
                return around(_original, args, kwargs)

            module.forward = forward
        yield
    finally:
        for module, previous in reversed(saved):
            if previous is None:
                module.__dict__.pop("forward", None)
            else:
                module.forward = previous


def _kept(
    forward: Callable[..., object], args: tuple[object, ...], kwargs: dict[str, object]
) -> object:
    if not torch.is_autocast_enabled("cpu"):  # float32 already: a float32 side pays nothing
        return forward(*args, **kwargs)
    float_args = cast(tuple[object, ...], _float32_tree(args))
    float_kwargs = cast(dict[str, object], _float32_tree(kwargs))
    with torch.autocast("cpu", enabled=False):
        return forward(*float_args, **float_kwargs)


def keep_float32(
    model: torch.nn.Module, names: Sequence[str]
) -> contextlib.AbstractContextManager[None]:
    """Under autocast, the named layers compute in float32 (autocast off, inputs float32)."""
    return around_layers(model, names, _kept)


def lower_only(
    model: torch.nn.Module, names: Sequence[str], dtype: torch.dtype
) -> contextlib.AbstractContextManager[None]:
    """In a float32 forward, the named layers alone run under autocast(`dtype`); what they
    return is float32 again for the float32 layers after them."""

    def lowered(
        forward: Callable[..., object], args: tuple[object, ...], kwargs: dict[str, object]
    ) -> object:
        with torch.autocast("cpu", dtype=dtype):
            out = forward(*args, **kwargs)
        return _float32_tree(out)

    return around_layers(model, names, lowered)


def kept_layers(model: torch.nn.Module, patterns: Sequence[str]) -> tuple[str, ...]:
    """The module paths `patterns` name (match_layers); a pattern that names no layer is the
    config's `keep_float32` refused (ConfigError, its nearest paths listed)."""
    try:
        return match_layers(model, patterns)
    except NoLayerMatched as exc:
        raise ConfigError(KEEP_FIELD, str(exc)) from None


@contextlib.contextmanager
def keeping(model: torch.nn.Module, patterns: Sequence[str]) -> Iterator[tuple[str, ...]]:
    """The layers `patterns` name kept in float32 inside the block (yields their paths); the
    model's forwards are as they were after it. Refuses before the block (`kept_layers`)."""
    names = kept_layers(model, patterns) if patterns else ()
    with keep_float32(model, names):
        yield names


class _KeptForward:
    """A kept layer's forward, set on its module for good. It holds the module, not a bound
    method, so a deep copy of the model gets a forward of its own copy."""

    def __init__(self, module: torch.nn.Module) -> None:
        self.module = module
        self.inner: Callable[..., object] | None = module.__dict__.get("forward")

    def __call__(self, *args: object, **kwargs: object) -> object:
        inner = self.inner
        if inner is None:
            inner = type(self.module).forward.__get__(self.module)
        return _kept(inner, args, kwargs)


def kept_copy(model: torch.nn.Module, names: Sequence[str]) -> torch.nn.Module:
    """A deep copy of `model` whose `names` layers stay kept in float32 (the copy is the
    caller's own: nothing is restored)."""
    twin = copy.deepcopy(model)
    modules = dict(twin.named_modules())
    for name in names:
        modules[name].forward = _KeptForward(modules[name])
    return twin

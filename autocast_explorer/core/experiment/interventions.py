"""Changing what precision chosen layers compute in: keep them in float32 under autocast, or
lower only them in an otherwise float32 forward.

A layer is named by a pattern: a module path glob (`encoder.layer.*.attention`, `fc1`) or a
class name (`LayerNorm`). Inside a kept layer autocast is disabled and its floating inputs are
made float32 again (a bfloat16 input into a float32 Linear would raise); a layer lowered alone
gives float32 back, so the float32 layers after it still run.

Wrapping `forward` (as runtime/wrapping.py does), not hooks: hooks cannot hold a context open
around the call when it raises, and torch's fused transformer kernel refuses hooked layers.
`torch.compile` traces the wrapped forward, autocast's enter and exit included.
"""

from __future__ import annotations

import contextlib
import difflib
import fnmatch
from collections.abc import Callable, Iterator, Sequence
from typing import cast

import torch
from torch.utils import _pytree as pytree


class NoLayerMatched(ValueError):
    """A pattern named no module of the model; the message lists the nearest module paths."""


def module_paths(model: torch.nn.Module) -> tuple[str, ...]:
    """Every module's dotted path below the model (the model itself has none)."""
    return tuple(name for name, _ in model.named_modules() if name)


def _matches(pattern: str, name: str, module: torch.nn.Module) -> bool:
    return type(module).__name__ == pattern or fnmatch.fnmatchcase(name, pattern)


def nearest_paths(model: torch.nn.Module, pattern: str, count: int = 5) -> list[str]:
    """The module paths (and class names) closest to a pattern that matched nothing."""
    names = list(module_paths(model))
    classes = sorted({type(module).__name__ for _, module in model.named_modules()})
    near = difflib.get_close_matches(pattern, names + classes, n=count, cutoff=0.4)
    return near or names[:count]


def match_layers(model: torch.nn.Module, patterns: Sequence[str]) -> tuple[str, ...]:
    """The paths of the modules the patterns name, in the model's order, each once.

    A module inside a matched one is not listed again (the outer one's scope covers it).
    Raises NoLayerMatched for the first pattern that names no module.
    """
    matched: list[str] = []
    for pattern in patterns:
        found = [
            name for name, mod in model.named_modules() if name and _matches(pattern, name, mod)
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

"""Every layer's forward routed through one function for the length of a block.

The layer-by-layer dtype capture (core.experiment.capture) and the op trace's attribution of
each op to its layer (core.numerics.optrace) both need to run code around each module call.
Wrapping `forward`, not hooks: torch's fused transformer kernel refuses to run when any hook
is attached to the layer, so hooks would measure a different path than the timed one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import torch

#: Runs one module call, given the module's name, the module, a thunk calling the real forward,
#: and the call's positional and keyword arguments; returns what the forward returned.
AroundFn = Callable[
    [str, torch.nn.Module, Callable[[], object], tuple[object, ...], dict[str, object]], object
]


@contextlib.contextmanager
def wrapped_forwards(model: torch.nn.Module, around: AroundFn) -> Iterator[None]:
    """Route the forward of every module below `model` through `around` inside the block.

    Wrapping rather than hooks: torch's fused transformer kernel refuses to run with a hook
    attached, so hooks would measure another path than the timed one.
    """
    wrapped: list[tuple[torch.nn.Module, Callable[..., object] | None]] = []

    def wrap(name: str, module: torch.nn.Module) -> None:
        original = module.forward
        wrapped.append((module, module.__dict__.get("forward")))

        def forward(*args: object, **kwargs: object) -> object:
            return around(name, module, lambda: original(*args, **kwargs), args, kwargs)

        module.forward = forward

    for name, module in model.named_modules():
        if module is not model:
            wrap(name, module)
    try:
        yield
    finally:
        for module, previous in wrapped:  # a forward set before (a kept layer's) comes back
            if previous is None:
                module.__dict__.pop("forward", None)
            else:
                module.forward = previous

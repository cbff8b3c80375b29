"""Which dtype each layer really ran in: forward hooks on every layer, in both modes.

Hooks observe the tensors that flow between modules, so what is recorded is what the installed
torch produced, not what the docs say autocast should do.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from autocast_explorer.core.experiment.model import dtype_name
from autocast_explorer.core.numerics.layer_error import LayerError, layer_error


@dataclass(frozen=True)
class LayerDtypes:
    """Input and output dtype of one layer in one mode."""

    in_dtype: str
    out_dtype: str

    def to_dict(self) -> dict[str, str]:
        return {"in": self.in_dtype, "out": self.out_dtype}


@dataclass(frozen=True)
class LayerRecord:
    """One layer of the model with the dtypes measured in each mode."""

    name: str
    kind: str
    plain: LayerDtypes
    autocast: LayerDtypes
    out_shape: tuple[int, ...] = ()
    error: LayerError | None = None  # autocast output vs float32 output (core/numerics.py)


@dataclass
class LayerCapture:
    """What a hook saw in one forward: dtypes, shape, and (optionally) the output tensor."""

    name: str
    kind: str
    in_dtype: str
    out_dtype: str
    out_shape: tuple[int, ...]
    output: torch.Tensor | None = None


def _first_tensor(value: object) -> torch.Tensor | None:
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, tuple | list):
        for item in value:
            if isinstance(item, torch.Tensor):
                return item
    return None


def autocast_context(dtype: torch.dtype | None) -> contextlib.AbstractContextManager[object]:
    """torch.autocast('cpu', dtype) or a no-op for the plain (float32) mode."""
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast("cpu", dtype=dtype)


@contextlib.contextmanager
def _hooks(model: torch.nn.Module, sink: list[LayerCapture], keep: bool) -> Iterator[None]:
    handles = []

    def make_hook(name: str):
        def hook(module: torch.nn.Module, inputs: tuple, output: object) -> None:
            x = _first_tensor(inputs)
            y = _first_tensor(output)
            if x is None or y is None:
                return
            sink.append(
                LayerCapture(
                    name=name,
                    kind=type(module).__name__,
                    in_dtype=dtype_name(x.dtype),
                    out_dtype=dtype_name(y.dtype),
                    out_shape=tuple(y.shape),
                    output=y.detach().clone() if keep else None,
                )
            )

        return hook

    for name, module in model.named_children():
        handles.append(module.register_forward_hook(make_hook(name)))
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def capture_forward(
    model: torch.nn.Module,
    x: torch.Tensor,
    autocast_dtype: torch.dtype | None,
    keep_outputs: bool = False,
) -> tuple[torch.Tensor, list[LayerCapture]]:
    """One forward under no_grad (and autocast when a dtype is given), hooks on every layer."""
    captured: list[LayerCapture] = []
    with torch.no_grad(), _hooks(model, captured, keep_outputs), autocast_context(autocast_dtype):
        logits = model(x)
    return logits.detach(), captured


def pair_layers(plain: list[LayerCapture], auto: list[LayerCapture]) -> list[LayerRecord]:
    """Join the two modes' captures layer by layer (same model, same order).

    When both captures kept their outputs, each record also gets the layer's error.
    """
    return [
        LayerRecord(
            name=p.name,
            kind=p.kind,
            plain=LayerDtypes(p.in_dtype, p.out_dtype),
            autocast=LayerDtypes(a.in_dtype, a.out_dtype),
            out_shape=p.out_shape,
            error=(
                layer_error(p.output, a.output)
                if p.output is not None and a.output is not None
                else None
            ),
        )
        for p, a in zip(plain, auto, strict=True)
    ]

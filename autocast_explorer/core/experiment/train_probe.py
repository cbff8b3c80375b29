"""One training step observed four ways, at the initial weights, before any training.

What autocast does in a training step is measured, not assumed: forward and backward hooks give
each layer's dtypes, an OpTracer (a TorchDispatchMode, which sees the autograd engine's backward
ops too) records the aten ops of each phase, and a pack hook of `saved_tensors_hooks` counts the
bytes of every tensor autograd saves for backward — where autocast's memory saving shows.
"""

from __future__ import annotations

import warnings
from collections import Counter
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils.hooks import RemovableHandle

from autocast_explorer.core.experiment.capture import first_tensor
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families.user.record import rows_at_depth
from autocast_explorer.core.experiment.train_report import OpUse
from autocast_explorer.core.experiment.train_step import INIT_SCALE, uses_scaler
from autocast_explorer.core.experiment.train_task import CROSS_ENTROPY, loss_function
from autocast_explorer.core.numerics.optrace import OpTracer
from autocast_explorer.core.runtime.autocast import autocast_context
from autocast_explorer.core.runtime.dtypes import dtype_name

#: One layer's row: name, kind, forward (in, out) dtypes, backward (grad of output, of input).
LayerRow = tuple[str, str, tuple[str, str], tuple[str, str]]


@dataclass(frozen=True)
class StepProbe:
    """One instrumented training step of one mode at the initial weights."""

    loss_dtype: str
    output_dtype: str
    grad_dtypes: dict[str, str]
    grads: dict[str, torch.Tensor]
    saved_bytes: int
    saved_tensors: int
    layers: list[LayerRow]
    forward_ops: tuple[OpUse, ...]
    backward_ops: tuple[OpUse, ...]


#: A layer's backward dtypes when torch called no backward hook for it: its output is not a
#: tensor or a tuple of tensors (a Hugging Face output object), or no gradient reached it (the
#: loss does not use its output, as BERT's pooler beside the last hidden state).
NOT_SEEN = "unseen"


def _output_tensor(output: object) -> torch.Tensor | None:
    """The tensor a layer's output stands for (families.user.loader.main_tensor's rule)."""
    from autocast_explorer.core.experiment.families.user.loader import main_tensor

    found = main_tensor(output)
    return found if isinstance(found, torch.Tensor) else None


def _name(t: torch.Tensor | None) -> str:
    return dtype_name(t.dtype) if t is not None else "none"


def _op_uses(tracer: OpTracer) -> tuple[OpUse, ...]:
    counts = Counter((r.op, r.in_dtypes, r.out_dtypes) for r in tracer.records)
    return tuple(
        OpUse(op=op, in_dtypes=i, out_dtypes=o, count=n) for (op, i, o), n in counts.items()
    )


def traced_modules(
    config: ExperimentConfig, model: torch.nn.Module
) -> list[tuple[str, torch.nn.Module]]:
    """The modules a training step records: a built-in family's top-level children; for your
    own model the rows `run` shows, cut at --layer-depth (default: ≤ 40 rows), so a ResNet's
    or a BERT's table stays readable and names the same modules as its inference run."""
    if not config.is_user_model:
        return list(model.named_children())
    named = [(name, module) for name, module in model.named_modules() if name]
    shown, _info = rows_at_depth(config, [name for name, _ in named])
    return [(name, module) for name, module in named if name in shown]


def probe_step(
    config: ExperimentConfig,
    model: torch.nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    dtype: torch.dtype | None,
    loss_kind: str = CROSS_ENTROPY,
) -> StepProbe:
    """Forward + loss + backward once, observed four ways, without an optimizer step.

    Forward/backward hooks give each layer's dtypes; an OpTracer (a TorchDispatchMode, which sees
    the autograd engine's backward ops too) records the aten ops of each phase; a pack hook of
    `saved_tensors_hooks` counts the bytes of every tensor autograd saves for backward. With a
    GradScaler the loss is scaled as in training and the gradients unscaled before reading.
    """
    model.train()
    model.zero_grad(set_to_none=True)
    layers: dict[str, dict[str, Any]] = {}
    handles = _hook_layers(traced_modules(config, model), layers)
    saved = _SavedTensors()
    use_scaler = dtype is not None and uses_scaler(config)
    scaler = torch.amp.GradScaler("cpu", init_scale=INIT_SCALE) if use_scaler else None
    label = "plain" if dtype is None else "autocast"
    try:
        with (
            warnings.catch_warnings(),
            torch.autograd.graph.saved_tensors_hooks(saved.pack, lambda t: t),
            OpTracer(label) as forward_tracer,
            autocast_context(dtype),
        ):
            # A layer returning an object (a Hugging Face ModelOutput) gets no backward hook
            # call; torch warns so, and the layer's backward reads NOT_SEEN.
            warnings.filterwarnings("ignore", message="For backward hooks to be called")
            output = model(x)
            loss = loss_function(config.head, loss_kind)(output, y)
        with warnings.catch_warnings(), OpTracer(label) as backward_tracer:
            # The input needs no gradient, so the first layer's hook reports grad_in as None;
            # torch warns about exactly that, which is what we want to record.
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            (scaler.scale(loss) if scaler is not None else loss).backward()
    finally:
        for handle in handles:
            handle.remove()
    return StepProbe(
        loss_dtype=dtype_name(loss.dtype),
        output_dtype=dtype_name(output.dtype),
        grad_dtypes={
            name: dtype_name(p.grad.dtype)
            for name, p in model.named_parameters()
            if p.grad is not None
        },
        grads=_unscaled_gradients(model, scaler),
        saved_bytes=saved.bytes,
        saved_tensors=saved.tensors,
        layers=_layer_rows(layers),
        forward_ops=_op_uses(forward_tracer),
        backward_ops=_op_uses(backward_tracer),
    )


def _hook_layers(
    modules: list[tuple[str, torch.nn.Module]], layers: dict[str, dict[str, Any]]
) -> list[RemovableHandle]:
    """Hooks that write each module's forward and backward dtypes into `layers[name]` (the
    caller removes the handles once the step is done)."""
    handles = []
    for name, module in modules:
        entry = layers.setdefault(name, {"kind": type(module).__name__})

        def forward_hook(
            mod: torch.nn.Module,
            args: tuple[Any, ...],
            kwargs: dict[str, Any],
            output: object,
            e: dict[str, Any] = entry,
        ) -> None:
            # Inputs may come as keywords (a Hugging Face model calls its parts so); an output
            # object is read by the rule every run path uses (its logits or last hidden state).
            x_in = first_tensor(args) if args else first_tensor(tuple(kwargs.values()))
            e["forward"] = (_name(x_in), _name(_output_tensor(output)))

        def backward_hook(
            mod: torch.nn.Module,
            grad_in: tuple[torch.Tensor | None, ...],
            grad_out: tuple[torch.Tensor | None, ...],
            e: dict[str, Any] = entry,
        ) -> None:
            e["backward"] = (_name(first_tensor(grad_out)), _name(first_tensor(grad_in)))

        handles.append(module.register_forward_hook(forward_hook, with_kwargs=True))
        handles.append(module.register_full_backward_hook(backward_hook))
    return handles


@dataclass
class _SavedTensors:
    """The pack hook of `saved_tensors_hooks`: counts what autograd keeps for backward."""

    bytes: int = 0
    tensors: int = 0

    def pack(self, t: torch.Tensor) -> torch.Tensor:
        self.bytes += t.numel() * t.element_size()
        self.tensors += 1
        return t


def _unscaled_gradients(
    model: torch.nn.Module, scaler: torch.amp.GradScaler | None
) -> dict[str, torch.Tensor]:
    """Each parameter's gradient as training would apply it (divided by the scaler's scale)."""
    scale = scaler.get_scale() if scaler is not None else 1.0
    return {
        name: (p.grad.detach() / scale if scale != 1.0 else p.grad.detach())
        for name, p in model.named_parameters()
        if p.grad is not None
    }


def _layer_rows(layers: dict[str, dict[str, Any]]) -> list[LayerRow]:
    """The hooked layers that ran forward; a backward no hook saw reads NOT_SEEN."""
    return [
        (
            name,
            e["kind"],
            e.get("forward", ("none", "none")),
            e.get("backward", (NOT_SEEN, NOT_SEEN)),
        )
        for name, e in layers.items()
        if "forward" in e
    ]


def underflowed_elements(plain: dict[str, torch.Tensor], auto: dict[str, torch.Tensor]) -> int:
    """Gradient elements that are zero under autocast but not in float32, same weights and batch.

    That is what underflow does: a product or sum too small for the low dtype becomes 0.
    """
    return sum(
        int(((auto[name] == 0) & (grad != 0)).sum()) for name, grad in plain.items() if name in auto
    )

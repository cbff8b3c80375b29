"""Which dtype each layer really ran in: every module's output, in both modes.

Each module below the root has its `forward` wrapped for one forward pass, so what is recorded
is what the installed torch produced, not what the docs say autocast should do. Wrapping, not
forward hooks: torch's fused transformer kernel refuses to run when any hook is attached to the
layer, so hooks would measure a different path than the timed one. A module that a fused
kernel skips is not called and so not recorded, which is the honest picture of that path.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

import torch
from pydantic import Field, model_validator

from autocast_explorer.core.documents.field_types import Text, Whole, WholeMap, Wholes
from autocast_explorer.core.documents.held import write_always
from autocast_explorer.core.documents.model import Part, dump
from autocast_explorer.core.experiment.layer_patterns import within
from autocast_explorer.core.experiment.out_of_memory import is_out_of_memory
from autocast_explorer.core.numerics.compute import ComputeDtypes
from autocast_explorer.core.numerics.layer_error import LayerError, layer_error
from autocast_explorer.core.runtime.autocast import autocast_context
from autocast_explorer.core.runtime.dtypes import dtype_name
from autocast_explorer.core.runtime.errors import ConfigError, error_text
from autocast_explorer.core.runtime.wrapping import wrapped_forwards


class LayerDtypes(Part):
    """A layer's dtypes in one mode (`layers[].plain`, `layers[].autocast`)."""

    # Input and output dtype, and (when the op trace ran) the dtypes of the ops it computed
    # with: a GRU returns float32 under autocast yet multiplies in bfloat16.

    in_dtype: Annotated[Text, Field(alias="in")]
    out_dtype: Annotated[Text, Field(alias="out")]
    compute_dtypes: dict[str, WholeMap] | None = Field(
        default=None,
        description="what the layer computed in, from the op trace: op → dtype → count of its "
        "ops that did maths (casts, views and shape ops left out), the ops of the layers nested "
        "inside it included; absent when not traced",
        exclude_if=lambda value: value is None,
    )
    casts: Annotated[
        Whole, Field(description="dtype casts dispatched inside the layer (with compute_dtypes)")
    ] = 0

    @classmethod
    def of(cls, in_dtype: str, out_dtype: str, compute: ComputeDtypes | None = None) -> LayerDtypes:
        extra = compute.to_json() if compute is not None else {}
        return cls(in_dtype=in_dtype, out_dtype=out_dtype, **extra)

    @property
    def compute(self) -> ComputeDtypes | None:
        """What the layer computed in; None: not traced (training, older files, a fused
        kernel)."""
        if self.compute_dtypes is None:
            return None
        return ComputeDtypes({op: dict(d) for op, d in self.compute_dtypes.items()}, self.casts)

    def to_dict(self) -> dict[str, Any]:
        return dump(self)


class LayerRecord(Part):
    """One layer of the model with the dtypes measured in each mode (an entry of `layers`)."""

    schema_name: ClassVar[str] = "layer"

    name: Text
    kind: Text
    out_shape: Wholes = ()
    plain: LayerDtypes
    autocast: LayerDtypes | None = Field(
        description="null: the autocast forward raised before this layer"
    )
    #: The autocast output against the float32 output (numerics/layer_error.py); None: not
    #: compared (left out of the file).
    error: LayerError | None = Field(default=None, exclude_if=lambda value: value is None)
    #: Written on every layer of a run that kept layers in float32 (config.keep_float32);
    #: absent, false, from any other run.
    kept_float32: bool = Field(
        default=False,
        description="the run kept this layer in float32 (config.keep_float32 names it or a "
        "module around it): autocast was off inside it; written on every layer of a run that "
        "kept any (absent: false)",
    )

    @model_validator(mode="after")
    def _shape_written(self) -> LayerRecord:
        write_always(self, "out_shape")  # every layer's file entry has one, () or not
        return self


#: A layer's input dtype when it was called with no tensor (Swin's relative_position_bias
#: module makes its output from its own parameters): still a row, since it produced a tensor.
NO_TENSOR_IN = "none"


@dataclass
class LayerCapture:
    """What a hook saw in one forward: dtypes, shape, and (optionally) the output tensor."""

    name: str
    kind: str
    in_dtype: str
    out_dtype: str
    out_shape: tuple[int, ...]
    output: torch.Tensor | None = None
    order: int = 0  # when the call began: a layer is listed before the layers inside it


def first_tensor(value: object) -> torch.Tensor | None:
    """The first tensor in a module's arguments or output, looking inside nested tuples."""
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, tuple | list):
        for item in value:
            found = first_tensor(item)  # nested: an LSTM's (output, (h, c))
            if found is not None:
                return found
    return None


@contextlib.contextmanager
def _recording(model: torch.nn.Module, sink: list[LayerCapture], keep: bool) -> Iterator[None]:
    """Record the input and output dtype (and output) of every module that produced a tensor
    during the block; its input dtype is NO_TENSOR_IN when no tensor went in."""
    calls = itertools.count()

    def around(
        name: str,
        module: torch.nn.Module,
        run: Callable[[], object],
        args: tuple[object, ...],
        kwargs: dict[str, object],
    ) -> object:
        order = next(calls)
        output = run()
        x = first_tensor(args) if args else first_tensor(tuple(kwargs.values()))
        y = first_tensor(output)
        if y is not None:
            sink.append(
                LayerCapture(
                    name=name,
                    kind=type(module).__name__,
                    in_dtype=dtype_name(x.dtype) if x is not None else NO_TENSOR_IN,
                    out_dtype=dtype_name(y.dtype),
                    out_shape=tuple(y.shape),
                    output=y.detach().clone() if keep else None,
                    order=order,
                )
            )
        return output

    try:
        with wrapped_forwards(model, around):
            yield
    finally:
        sink.sort(key=lambda c: c.order)


@dataclass
class Capture:
    """One recorded forward: logits (None if it raised), the layers seen, and the error (its
    text, and the exception itself for a caller that cannot go on without the output)."""

    logits: torch.Tensor | None
    layers: list[LayerCapture]
    error: str = ""
    raised: Exception | None = None


class AutocastFailed(ConfigError):
    """The autocast side raised where both sides are needed (a sweep point, a training run).

    A single `run` turns this into a finding; work that compares the two sides cannot go on,
    so it stops with one line naming the error.
    """


def record_forward(
    model: torch.nn.Module,
    x: torch.Tensor,
    autocast_dtype: torch.dtype | None,
    keep_outputs: bool = False,
) -> Capture:
    """One forward under no_grad (and autocast when a dtype is given), every layer recorded;
    a forward that raises is returned as its error message, with the layers that ran before it."""
    captured: list[LayerCapture] = []
    try:
        with (
            torch.no_grad(),
            _recording(model, captured, keep_outputs),
            autocast_context(autocast_dtype),
        ):
            logits = model(x)
    except Exception as exc:
        if is_out_of_memory(exc):
            raise  # memory, not autocast: its own outcome (core.experiment.out_of_memory)
        return Capture(None, captured, error_text(exc), exc)
    return Capture(logits.detach(), captured)


def call_keys(names: Sequence[str]) -> list[tuple[str, int]]:
    """Each call's key: its layer's name and how many calls of that layer came before it (a
    layer called twice pairs call by call). reproduce.py pastes this to pair its records."""
    seen: dict[str, int] = {}
    keys = []
    for name in names:
        keys.append((name, seen.get(name, 0)))
        seen[name] = keys[-1][1] + 1
    return keys


def marked_kept(layers: Sequence[LayerRecord], kept: Sequence[str]) -> tuple[LayerRecord, ...]:
    """The layers with `kept_float32` written on each (true for a kept module or one inside)
    when the run kept any; as they were when it kept none (files stay as before)."""
    if not kept:
        return tuple(layers)
    return tuple(
        layer.model_copy(update={"kept_float32": within(layer.name, kept)}) for layer in layers
    )


def pair_layers(plain: list[LayerCapture], auto: list[LayerCapture]) -> list[LayerRecord]:
    """Join the two modes' captures layer by layer, by name and call order.

    A layer the autocast forward never reached (it raised first) keeps autocast None. When
    both captures kept their outputs, each record also gets the layer's error.
    """
    by_key = dict(zip(call_keys([a.name for a in auto]), auto, strict=True))
    records = []
    for key, p in zip(call_keys([p.name for p in plain]), plain, strict=True):
        twin = by_key.get(key)
        records.append(
            LayerRecord(
                name=p.name,
                kind=p.kind,
                plain=LayerDtypes.of(p.in_dtype, p.out_dtype),
                autocast=LayerDtypes.of(twin.in_dtype, twin.out_dtype)
                if twin is not None
                else None,
                out_shape=p.out_shape,
                error=(
                    layer_error(p.output, twin.output)
                    if twin is not None
                    and p.output is not None
                    and twin.output is not None
                    and p.output.shape == twin.output.shape
                    else None
                ),
            )
        )
    return records

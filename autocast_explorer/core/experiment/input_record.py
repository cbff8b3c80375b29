"""What a run fed its model (the result's `input`): the argument's name, what it holds, its
shape and dtype, and the smallest and largest value fed — for token ids, the id range, so a
run that fed ids far below the vocabulary says so instead of agreeing on a few ids.

Torch-free at import (the families name their kind without torch); the record is measured
from the tensors fed.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BeforeValidator, Field, PlainSerializer, WithJsonSchema

from autocast_explorer.core.documents.field_types import Text, Wholes, refuse
from autocast_explorer.core.documents.model import Part, dump
from autocast_explorer.core.documents.reader import is_finite_number
from autocast_explorer.core.experiment.input_kind import InputKind

if TYPE_CHECKING:
    import torch


def _bound(value: Any) -> Any:
    """A whole number stays whole (token ids); null reads as NaN (a value that was not finite)."""
    if value is None:
        return math.nan
    if isinstance(value, float) and math.isnan(value):
        return value
    if not is_finite_number(value):
        raise refuse("expected a number or null")
    return value


#: The smallest or largest value fed: an int for token ids, a float otherwise (NaN: not finite,
#: written null).
Bound = Annotated[
    int | float,
    BeforeValidator(_bound),
    PlainSerializer(
        lambda v: None if isinstance(v, float) and not math.isfinite(v) else v, when_used="json"
    ),
    WithJsonSchema({"anyOf": [{"type": "number"}, {"type": "null"}]}),
]


class FedTensor(Part):
    """One tensor a run fed its model: `input`, or one fed beside it (`input.companions`)."""

    kind: InputKind
    name: Annotated[Text, Field(description="the model's argument it was passed as")]
    shape: Annotated[Wholes, Field(description="as fed, the batch dimension first")]
    dtype: Text
    low: Annotated[Bound, Field(description="the smallest value fed (tokens: the smallest id)")]
    high: Annotated[Bound, Field(description="the largest value fed (tokens: the largest id)")]


class InputRecord(FedTensor):
    """The result's `input`: what the model was fed (training: every batch of its task)."""

    companions: tuple[FedTensor, ...] = Field(
        default=(),
        description="other tensors fed with it: an encoder-decoder model's decoder_input_ids",
    )

    def to_dict(self) -> dict[str, Any]:
        return dump(self)


def fed_tensor(kind: InputKind, name: str, batches: Sequence[torch.Tensor]) -> FedTensor:
    """The record of `batches` (at least one) fed as `name`: the first one's shape and dtype,
    the extremes over all of them."""
    first = batches[0]
    number = float if first.is_floating_point() else int
    lows = [number(b.min()) for b in batches if b.numel()]
    highs = [number(b.max()) for b in batches if b.numel()]
    return FedTensor(
        kind=kind,
        name=name,
        shape=tuple(first.shape),
        dtype=str(first.dtype).removeprefix("torch."),
        low=min(lows, default=math.nan),
        high=max(highs, default=math.nan),
    )


def input_record(
    kind: InputKind,
    name: str,
    batches: Sequence[torch.Tensor],
    companions: Iterable[Mapping[str, torch.Tensor]] = (),
) -> InputRecord:
    """The `input` of a run that fed `batches` as `name`, each with its `companions` (one
    mapping per batch, argument → tensor; token ids all of them)."""
    main = fed_tensor(kind, name, batches)
    beside: dict[str, list[torch.Tensor]] = {}
    for fed in companions:
        for key, tensor in fed.items():
            beside.setdefault(key, []).append(tensor)
    extra = tuple(
        fed_tensor("tokens" if not t[0].is_floating_point() else "float", key, t)
        for key, t in beside.items()
    )
    return InputRecord(**main.model_dump(), companions=extra)


def first_argument(module: Any) -> str:
    """The name of the first argument `module`'s forward takes ('input' for nn.Sequential)."""
    try:
        parameters = inspect.signature(module.forward).parameters.values()
    except (TypeError, ValueError):
        return "x"
    for p in parameters:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL):
            return p.name
    return "x"


def _number(value: float) -> str:
    if isinstance(value, int):
        return str(value)
    return "nan" if math.isnan(value) else f"{value:.4g}"


def fed_words(fed: FedTensor) -> str:
    """'tokens 2×8 int64 as input_ids, ids 0 … 99' (values for other kinds)."""
    span = "ids" if fed.kind == "tokens" else "values"
    shape = "×".join(map(str, fed.shape)) or "scalar"
    return (
        f"{fed.kind} {shape} {fed.dtype} as {fed.name}, {span} {_number(fed.low)} … "
        f"{_number(fed.high)}"
    )


def input_words(record: InputRecord) -> str:
    """The whole record in one line: the input, then what was fed beside it."""
    beside = "".join(f"; with {fed_words(c)}" for c in record.companions)
    return fed_words(record) + beside

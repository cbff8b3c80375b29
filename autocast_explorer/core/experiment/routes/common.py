"""What every route shares: eager float32's output to compare with, the words a finding uses,
and measuring a route by the module its registration names."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Protocol

import torch

from autocast_explorer.core.experiment.agreement import compare_logits
from autocast_explorer.core.experiment.capture import first_tensor
from autocast_explorer.core.experiment.route_kinds import reference_route, route_kind
from autocast_explorer.core.experiment.routes.result import RouteAgreement, RouteResult
from autocast_explorer.core.numerics.layer_error import LayerError, layer_error
from autocast_explorer.core.runtime.dtypes import dtype_name
from autocast_explorer.core.runtime.progress import Reporter


@dataclass(frozen=True)
class Reference:
    """Eager float32's output: what every route is compared with."""

    logits: torch.Tensor
    atol: float
    rtol: float
    topk: int
    lower_logits: torch.Tensor | None = None  # eager autocast's output (None: it raised)

    def compare(self, output: object) -> tuple[LayerError | None, RouteAgreement | None]:
        """Error and agreement of `output` (its first tensor) against eager float32."""
        tensor = first_tensor(output)
        if tensor is None or tensor.shape != self.logits.shape:
            return None, None
        error = layer_error(self.logits, tensor)
        if self.logits.dim() != 2:
            return error, None
        agreement = compare_logits(self.logits, tensor, self.atol, self.rtol, self.topk)
        return error, RouteAgreement.of(agreement)


@dataclass(frozen=True)
class RouteCall:
    """What a route's `measure` gets: the model and its input, the run's lower dtype, eager
    float32's output to compare with, the seconds to time each side for, progress and
    cancellation, whether a slow step (a long compile) was allowed, and the paths of the layers
    the run keeps in float32 (kept already: each route says what keeping did there)."""

    model: torch.nn.Module
    x: torch.Tensor
    low: torch.dtype
    reference: Reference
    min_time: float
    reporter: Reporter
    allow_slow: bool = False
    kept: tuple[str, ...] = ()


class Measure(Protocol):
    """A route module's `measure`: its float32 and lower side of `call.model(call.x)`, timed for
    at least `call.min_time` each and compared with `call.reference`."""

    def __call__(self, call: RouteCall) -> RouteResult: ...


def measure_route(name: str, call: RouteCall) -> RouteResult:
    """Measure the route `name` (not the reference: that is the engine's own run) by its
    registered module's `measure`; call under torch.no_grad()."""
    kind = route_kind(name)
    if kind is None or name == reference_route():
        raise ValueError(f"no route {name!r} to measure beside {reference_route()}")
    measure: Measure = importlib.import_module(kind.module).measure
    return measure(call)


def closeness(error: LayerError | None) -> str:
    """'identical' or the SQNR, as a finding says how close two outputs are."""
    if error is None:
        return "not comparable (other shape)"
    if error.nonfinite:
        return f"{error.nonfinite} of {error.numel} values not finite (NaN or inf)"
    return "identical" if error.identical else f"SQNR {error.sqnr_db:.1f} dB"


def output_dtypes(outputs: list[object]) -> dict[str, str]:
    """The dtype of each side's output (plain, lower) that has a tensor."""
    found = {}
    for side, output in zip(("plain", "lower"), outputs, strict=False):
        tensor = first_tensor(output)
        if tensor is not None:
            found[side] = dtype_name(tensor.dtype)
    return found

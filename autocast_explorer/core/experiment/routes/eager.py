"""eager: float32 vs `torch.autocast("cpu")` around the forward, the reference route. The engine
measures it as its own run; this turns that measurement into a route (no extra forwards)."""

from __future__ import annotations

import torch

from autocast_explorer.core.experiment.interval import SpeedupInterval
from autocast_explorer.core.experiment.routes.common import Reference
from autocast_explorer.core.experiment.routes.result import RouteResult
from autocast_explorer.core.experiment.timing import LatencyStats
from autocast_explorer.core.numerics.layer_error import layer_error
from autocast_explorer.core.runtime.dtypes import dtype_name


def eager_route(
    plain: LatencyStats,
    lower: LatencyStats | None,
    dtype: str,
    reference: Reference,
    lower_output: torch.Tensor | None,
    autocast_error: str,
    interval: SpeedupInterval | None = None,
) -> RouteResult:
    """The engine's own eager measurement as a route (no extra forwards or timing); `interval`
    is the run's own."""
    error, agreement = (None, None) if lower_output is None else reference.compare(lower_output)
    output_dtype = {"plain": dtype_name(reference.logits.dtype)}
    if lower_output is not None:
        output_dtype["lower"] = dtype_name(lower_output.dtype)
    return RouteResult(
        name="eager",
        lower_dtype=dtype,
        plain=plain,
        lower=lower,
        output_dtype=output_dtype,
        error=error,
        plain_error=layer_error(reference.logits, reference.logits),
        agreement=agreement,
        finding=f"autocast raised: {autocast_error}" if autocast_error else "",
        interval=interval,
    )

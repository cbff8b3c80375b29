"""implicit: float32 vs float32 with `torch.backends.mkldnn.{matmul,conv,rnn}.fp32_precision =
"bf16"` (oneDNN may then run float32 GEMMs with bf16 maths). The setting is process-wide, so it
is set around the lower side's blocks only and always restored. Whether oneDNN really used bf16
maths is read from its verbose log, never assumed; a torch without the setting is a finding.
Inside the layers a run keeps in float32 the setting is "ieee" again: their GEMMs keep float32
maths."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator

import torch

from autocast_explorer.core.experiment.interventions import around_layers
from autocast_explorer.core.experiment.routes.common import Reference, RouteCall, output_dtypes
from autocast_explorer.core.experiment.routes.result import RouteResult
from autocast_explorer.core.experiment.timing import cold_call_ms, measure_paired
from autocast_explorer.core.hardware.onednn import capture_fd1, fpmath_gemms
from autocast_explorer.core.runtime.progress import Reporter

#: The oneDNN op groups whose float32 precision the implicit route lowers.
IMPLICIT_BACKENDS: tuple[str, ...] = ("matmul", "conv", "rnn")
IMPLICIT_PRECISION = "bf16"
#: What a kept layer's GEMMs run with under the implicit setting: float32 maths.
KEPT_PRECISION = "ieee"


def implicit_supported() -> bool:
    """Whether this torch has torch.backends.mkldnn.<op>.fp32_precision for every op group."""
    mkldnn = torch.backends.mkldnn
    return all(hasattr(getattr(mkldnn, op, None), "fp32_precision") for op in IMPLICIT_BACKENDS)


@contextlib.contextmanager
def implicit_precision(precision: str = IMPLICIT_PRECISION) -> Iterator[None]:
    """fp32_precision = `precision` for matmul, conv and rnn inside the block, then restored
    (always, even when the block raises: the setting is process-wide)."""
    groups = [getattr(torch.backends.mkldnn, op) for op in IMPLICIT_BACKENDS]
    previous = [group.fp32_precision for group in groups]
    try:
        for group in groups:
            group.fp32_precision = precision
        yield
    finally:
        for group, value in zip(groups, previous, strict=True):
            group.fp32_precision = value


def _float32_maths(
    forward: Callable[..., object], args: tuple[object, ...], kwargs: dict[str, object]
) -> object:
    matmul = getattr(torch.backends.mkldnn, IMPLICIT_BACKENDS[0])
    if matmul.fp32_precision in ("none", KEPT_PRECISION):
        return forward(*args, **kwargs)  # float32 maths already: the float32 side pays nothing
    with implicit_precision(KEPT_PRECISION):
        return forward(*args, **kwargs)


def kept_maths(
    model: torch.nn.Module, kept: tuple[str, ...]
) -> contextlib.AbstractContextManager[None]:
    """Inside the `kept` layers, fp32_precision is "ieee" whatever it is outside (restored as
    each call returns); their forwards are as they were after the block."""
    return around_layers(model, kept, _float32_maths)


def kept_clause(kept: tuple[str, ...]) -> str:
    """What the finding says of the kept layers ('' when none was kept)."""
    if not kept:
        return ""
    return (
        f"; inside the layers kept in float32 ({', '.join(kept)}) fp32_precision was "
        f"{KEPT_PRECISION}: their GEMMs kept float32 maths"
    )


def implicit_kernels(model: torch.nn.Module, x: torch.Tensor) -> tuple[list[str], list[str]]:
    """oneDNN's GEMMs in one forward under the implicit setting, and those with bf16 maths."""

    def forward() -> None:
        verbose = torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON)
        with verbose, implicit_precision():
            model(x)

    return fpmath_gemms(capture_fd1(forward), IMPLICIT_PRECISION)


def implicit_finding(
    gemms: list[str], lowered: list[str], identical: bool | None, log_error: str = ""
) -> str:
    """What the setting did, in words, from the verbose log and the outputs."""
    same = {True: "identical to", False: "different from", None: "not comparable with"}[identical]
    if log_error:
        return (
            f"oneDNN's verbose log could not be read ({log_error}), so whether it used bf16 "
            f"maths is unknown; the output is {same} eager float32"
        )
    if lowered:
        kinds = ", ".join(dict.fromkeys(lowered))
        return (
            f"oneDNN ran {len(lowered)} of {len(gemms)} GEMMs in fpmath mode bf16 (float32 "
            f"tensors, bf16 maths allowed: {kinds}); the output is {same} eager float32"
        )
    where = (
        f"oneDNN ran {len(gemms)} GEMMs, none in fpmath mode bf16"
        if gemms
        else "no GEMM went through oneDNN"
    )
    return (
        f"the setting changed nothing measurable: {where}, so both sides computed in float32 "
        f"(the output is {same} eager float32)"
    )


def implicit_route(
    model: torch.nn.Module,
    x: torch.Tensor,
    reference: Reference,
    min_time: float,
    reporter: Reporter,
    kept: tuple[str, ...] = (),
) -> RouteResult:
    """Float32 vs float32 with oneDNN's fp32_precision lowered to bf16, timed ABAB; the `kept`
    layers' GEMMs keep float32 maths."""
    dtype = "bfloat16"
    if not implicit_supported():
        return RouteResult(
            name="implicit",
            lower_dtype=dtype,
            finding=f"torch {torch.__version__} has no torch.backends.mkldnn.matmul.fp32_precision",
        )
    with kept_maths(model, kept):
        route = _timed_route(model, x, reference, min_time, reporter)
    return route.model_copy(update={"finding": route.finding + kept_clause(kept)})


def _timed_route(
    model: torch.nn.Module,
    x: torch.Tensor,
    reference: Reference,
    min_time: float,
    reporter: Reporter,
) -> RouteResult:
    """What oneDNN did, then both sides timed ABAB (implicit_route's measurement)."""
    dtype = "bfloat16"
    reporter.report(0.02, "asking oneDNN which GEMMs use bf16 maths")
    try:
        gemms, lowered = implicit_kernels(model, x)
    except (OSError, RuntimeError, ValueError) as exc:
        gemms, lowered, log_error = [], [], str(exc)
    else:
        log_error = ""

    def plain() -> object:
        return model(x)

    cold_plain = cold_call_ms(plain)
    with implicit_precision():
        cold_lower = cold_call_ms(plain)
        lower_output = model(x)
    plain_output = model(x)
    reporter.check()
    timing = measure_paired(
        [plain, plain],
        min_time,
        reporter.span(0.1, 1.0),
        cold_ms=[cold_plain, cold_lower],
        labels=["float32", "float32 with bf16 maths"],
        block_contexts=[None, implicit_precision],
        max_time=math.inf,
    )
    plain_stats, lower_stats = timing.stats
    error, agreement = reference.compare(lower_output)
    plain_error, _ = reference.compare(plain_output)
    identical = None if error is None else error.identical
    return RouteResult(
        name="implicit",
        lower_dtype=dtype,
        plain=plain_stats,
        lower=lower_stats,
        output_dtype=output_dtypes([plain_output, lower_output]),
        error=error,
        plain_error=plain_error,
        agreement=agreement,
        kernels=tuple(lowered),
        finding=implicit_finding(gemms, lowered, identical, log_error),
        interval=timing.interval,
    )


def measure(call: RouteCall) -> RouteResult:
    """The route's `measure` (common.Measure): bf16 maths whatever the run's dtype, and
    nothing to compile, so `call.low` and `call.allow_slow` do not apply."""
    return implicit_route(
        call.model, call.x, call.reference, call.min_time, call.reporter, call.kept
    )

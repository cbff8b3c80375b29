"""Routes to a lower precision beside eager autocast, each measured plain vs lower.

- eager: float32 vs `torch.autocast("cpu")` around the forward (the engine's own run).
- compiled: `torch.compile` (inductor) of the float32 forward vs of a function with autocast
  inside; compile time (the first call of each) is kept apart from the steady state, which is
  timed by the same protocol as eager; graphs compiled after the first calls are recompiles.
- implicit: float32 vs float32 with `torch.backends.mkldnn.{matmul,conv,rnn}.fp32_precision =
  "bf16"` (oneDNN may then run float32 GEMMs with bf16 maths); the setting is process-wide, so
  it is set around the lower side's blocks only and always restored. Whether oneDNN really
  used bf16 maths is read from its verbose log, never assumed.

Every route's outputs are compared with eager float32 (error and agreement). A route that
fails here (no C++ compiler, a compile this CPU cannot do, a torch without the setting) is a
finding carrying torch's message, not a failed run. Routes work on any nn.Module and input.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch
from pydantic import Field

from autocast_explorer.core.documents.model import (
    Flag,
    NullableNumber,
    Part,
    Text,
    TextMap,
    Texts,
    Whole,
    WholeMap,
    build,
    dump,
    nan_if_none,
)
from autocast_explorer.core.experiment import guards
from autocast_explorer.core.experiment.agreement import Agreement, compare_logits
from autocast_explorer.core.experiment.capture import error_text, first_tensor
from autocast_explorer.core.experiment.certainty import (
    IntervalPart,
    SpeedCall,
    TimingEvidence,
    judge,
    speedup_figure,
)
from autocast_explorer.core.experiment.interval import SpeedupInterval, ratio_text
from autocast_explorer.core.experiment.timing import (
    LatencyPart,
    LatencyStats,
    cold_call_ms,
    measure_paired,
)
from autocast_explorer.core.hardware.onednn import capture_fd1, fpmath_gemms
from autocast_explorer.core.numerics.layer_error import LayerError, LayerErrorPart, layer_error
from autocast_explorer.core.runtime.autocast import autocast_context
from autocast_explorer.core.runtime.dtypes import dtype_name
from autocast_explorer.core.runtime.progress import Reporter

#: The oneDNN op groups whose float32 precision the implicit route lowers.
IMPLICIT_BACKENDS: tuple[str, ...] = ("matmul", "conv", "rnn")
IMPLICIT_PRECISION = "bf16"


@dataclass(frozen=True)
class RouteAgreement:
    """A route's lower output against eager float32: argmax agreement and closeness."""

    rows: int
    agree: int
    fraction: float
    max_abs_diff: float
    cosine: float
    allclose: bool

    @classmethod
    def of(cls, a: Agreement) -> RouteAgreement:
        return cls(a.rows, a.agree, a.fraction, a.max_abs_diff, a.cosine, a.allclose)

    def to_part(self) -> RouteAgreementPart:
        return build(
            RouteAgreementPart,
            rows=self.rows,
            agree=self.agree,
            fraction=self.fraction,
            max_abs_diff=_finite(self.max_abs_diff),
            cosine=_finite(self.cosine),
            allclose=self.allclose,
        )

    @classmethod
    def from_part(cls, part: RouteAgreementPart) -> RouteAgreement:
        return cls(
            rows=part.rows,
            agree=part.agree,
            fraction=part.fraction,
            max_abs_diff=nan_if_none(part.max_abs_diff),
            cosine=nan_if_none(part.cosine),
            allclose=part.allclose,
        )


@dataclass(frozen=True)
class RouteResult:
    """One route measured: latency of its float32 and lower side, and what the lower side did.

    `lower_dtype` is what the lower side computes in; `output_dtype` what each side returned.
    `error` and `agreement` compare the lower output with eager float32, `plain_error` the
    route's own float32 output with eager float32 (a compiled graph may reorder sums).
    compiled: `compile_s` (first calls of both sides: tracing and inductor's C++ build),
    `compile_estimate_s` (the guard's forecast; None before this process compiled anything),
    `graphs` compiled by those first calls, `recompiles` during the rest, `graph_ops` the torch
    ops Dynamo captured. implicit: `kernels` the oneDNN GEMMs that ran with bf16 maths.
    `finding` says what happened in words (why a side is missing, what did not change).
    """

    name: str
    lower_dtype: str
    plain: LatencyStats | None = None
    lower: LatencyStats | None = None
    output_dtype: dict[str, str] = field(default_factory=dict)
    error: LayerError | None = None
    plain_error: LayerError | None = None
    agreement: RouteAgreement | None = None
    compile_s: float | None = None
    compile_estimate_s: float | None = None
    graphs: int | None = None
    recompiles: int | None = None
    graph_ops: dict[str, int] = field(default_factory=dict)
    kernels: tuple[str, ...] = ()
    finding: str = ""
    #: The 95% interval of the paired float32 ÷ lower ratio (None: not timed, or a
    #: file written before routes had one).
    interval: SpeedupInterval | None = None

    @property
    def speedup(self) -> float:
        """The paired float32 ÷ lower ratio, as a run's speedup (certainty.
        speedup_figure); NaN when a side was not timed."""
        if self.plain is None or self.lower is None:
            return float("nan")
        return speedup_figure(self.plain.median_ms, self.lower.median_ms, self._evidence())

    @property
    def call(self) -> SpeedCall:
        """faster / slower / same / can't tell / too noisy, from the interval as for a run."""
        return judge(self.speedup, self._evidence())

    def speedup_text(self) -> str:
        """'1.72× (95%: 1.66–1.79)', '… · too noisy to tell', or '—' when not timed."""
        if not math.isfinite(self.speedup):
            return "—"
        text = f"{ratio_text(self.speedup)}×"
        if self.interval is not None:
            text += f" ({self.interval.text()})"
        return text + (" · too noisy to tell" if self.call.too_noisy else "")

    def _evidence(self) -> TimingEvidence | None:
        return None if self.interval is None else TimingEvidence(self.interval)

    def to_part(self) -> RoutePart:
        def part(value: Any) -> Any:
            return None if value is None else value.to_part()

        return build(
            RoutePart,
            name=self.name,
            lower_dtype=self.lower_dtype,
            plain=part(self.plain),
            lower=part(self.lower),
            speedup=_finite(self.speedup),
            output_dtype=dict(self.output_dtype),
            error=part(self.error),
            plain_error=part(self.plain_error),
            agreement=part(self.agreement),
            compile_s=self.compile_s,
            compile_estimate_s=self.compile_estimate_s,
            graphs=self.graphs,
            recompiles=self.recompiles,
            graph_ops=dict(self.graph_ops),
            kernels=tuple(self.kernels),
            finding=self.finding,
            speedup_interval=IntervalPart.of(self.interval),
        )

    def to_dict(self) -> dict[str, Any]:
        return dump(self.to_part())

    @classmethod
    def from_part(cls, part: RoutePart) -> RouteResult:
        return cls(
            name=part.name,
            lower_dtype=part.lower_dtype,
            plain=None if part.plain is None else LatencyStats.from_part(part.plain),
            lower=None if part.lower is None else LatencyStats.from_part(part.lower),
            output_dtype=dict(part.output_dtype or {}),
            error=None if part.error is None else LayerError.from_part(part.error),
            plain_error=(
                None if part.plain_error is None else LayerError.from_part(part.plain_error)
            ),
            agreement=(
                None if part.agreement is None else RouteAgreement.from_part(part.agreement)
            ),
            compile_s=part.compile_s,
            compile_estimate_s=part.compile_estimate_s,
            graphs=part.graphs,
            recompiles=part.recompiles,
            graph_ops=dict(part.graph_ops or {}),
            kernels=tuple(part.kernels or ()),
            finding=part.finding,
            interval=None if part.speedup_interval is None else part.speedup_interval.interval(),
        )


def _finite(value: float) -> float | None:
    """JSON has no NaN: an undefined ratio is written null."""
    return value if math.isfinite(value) else None


class RouteAgreementPart(Part):
    """A route's lower output against eager float32 (argmax agreement, closeness)."""

    rows: Whole()
    agree: Whole()
    fraction: NullableNumber(ge=0, le=1)
    max_abs_diff: NullableNumber(ge=0) = None
    cosine: NullableNumber() = None
    allclose: Flag()


class RoutePart(Part):
    """One entry of `routes[]` (a result's, or a sweep point's): a route measured float32 vs
    its lower side and compared with eager float32."""

    name: Text(description="eager | compiled | implicit")
    lower_dtype: Text(description="what the lower side computes in")
    plain: LatencyPart | None = Field(default=None, description="null: not timed")
    lower: LatencyPart | None = Field(default=None, description="null: not timed (finding)")
    speedup: NullableNumber(
        ge=0, description="paired float32 ÷ lower ratio (speedup_interval.estimate)"
    ) = None
    output_dtype: TextMap(description="dtype each side returned (plain, lower)") = None
    error: LayerErrorPart | None = Field(
        default=None, description="the lower output against eager float32"
    )
    plain_error: LayerErrorPart | None = Field(
        default=None, description="the route's float32 output against eager float32"
    )
    agreement: RouteAgreementPart | None = None
    compile_s: NullableNumber(ge=0, description="compiled: first calls of both sides") = None
    compile_estimate_s: NullableNumber(ge=0, description="the guard's compile forecast") = None
    graphs: Whole() | None = None
    recompiles: Whole(description="graphs compiled while timing") | None = None
    graph_ops: WholeMap(description="compiled: torch ops Dynamo captured") = None
    kernels: Texts(description="implicit: oneDNN GEMMs in fpmath mode bf16") = None
    finding: Text(multiline=True, description="what happened, in words") = ""
    speedup_interval: IntervalPart | None = Field(
        default=None, description="null: not timed, or written before routes had intervals"
    )


def routes_to_parts(routes: tuple[RouteResult, ...]) -> tuple[RoutePart, ...]:
    return tuple(route.to_part() for route in routes)


def routes_from_parts(parts: tuple[RoutePart, ...] | None) -> tuple[RouteResult, ...]:
    """The `routes` list of a document (absent in files written before routes: empty)."""
    return tuple(RouteResult.from_part(part) for part in parts or ())


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


def measure_route(
    name: str,
    model: torch.nn.Module,
    x: torch.Tensor,
    low: torch.dtype,
    reference: Reference,
    min_time: float,
    reporter: Reporter,
    allow_slow: bool = False,
) -> RouteResult:
    """Measure the non-eager route `name` on `model(x)`; call under torch.no_grad()."""
    if name == "compiled":
        return compiled_route(model, x, low, reference, min_time, reporter, allow_slow)
    if name == "implicit":
        return implicit_route(model, x, reference, min_time, reporter)
    raise ValueError(f"no route {name!r}")


# ---- compiled ----------------------------------------------------------------------------
def _op_name(gm: torch.fx.GraphModule, node: torch.fx.Node) -> str:
    if node.op == "call_module":
        return type(gm.get_submodule(str(node.target))).__name__
    if node.op == "call_method":
        return f".{node.target}"
    return getattr(node.target, "__name__", str(node.target))


def _recording_backend(ops: dict[str, int]) -> Callable[..., Any]:
    """inductor, after counting the ops of each graph Dynamo hands it."""

    def backend(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> Any:
        from torch._inductor.compile_fx import compile_fx

        for node in gm.graph.nodes:
            if node.op in ("call_function", "call_method", "call_module"):
                op = _op_name(gm, node)
                ops[op] = ops.get(op, 0) + 1
        return compile_fx(gm, example_inputs)

    return backend


def compiled_graphs() -> int:
    """Graphs Dynamo has compiled in this process (its `unique_graphs` counter)."""
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def compiled_route(
    model: torch.nn.Module,
    x: torch.Tensor,
    low: torch.dtype,
    reference: Reference,
    min_time: float,
    reporter: Reporter,
    allow_slow: bool = False,
) -> RouteResult:
    """torch.compile of the float32 forward and of one with autocast inside, then timed."""
    dtype = dtype_name(low)
    leaves = guards.leaf_modules(model)
    try:
        estimate = guards.check_compile(leaves, allow_slow)
    except guards.GuardError as exc:
        return RouteResult("compiled", dtype, finding=f"not compiled: {exc.rule}")
    import torch._dynamo

    torch._dynamo.reset()  # one session compiles many models: keep Dynamo's cache from filling
    ops: dict[str, int] = {}
    backend = _recording_backend(ops)

    def plain_fn(inp: torch.Tensor) -> object:
        return model(inp)

    def lower_fn(inp: torch.Tensor) -> object:
        with autocast_context(low):
            return model(inp)

    compiled = [torch.compile(plain_fn, backend=backend), torch.compile(lower_fn, backend=backend)]
    start_graphs = compiled_graphs()
    colds: list[float] = []
    outputs: list[object] = []
    for i, side in enumerate(("float32", dtype)):
        reporter.report(
            0.02 + 0.1 * i,
            f"compiling the {side} forward with inductor (cannot be cancelled while it builds)",
        )
        start = time.perf_counter()
        try:
            outputs.append(compiled[i](x))
        except Exception as exc:  # a compile failure of any kind is a finding, not a crash
            return _compile_failed(dtype, side, exc, colds, ops, estimate, reference, outputs)
        colds.append(time.perf_counter() - start)
        reporter.check()
    compile_s = sum(colds)
    graphs = compiled_graphs() - start_graphs
    guards.record_compile(compile_s, leaves)
    after_first = compiled_graphs()
    timing = measure_paired(
        [lambda: compiled[0](x), lambda: compiled[1](x)],
        min_time,
        reporter.span(0.25, 1.0),
        cold_ms=[c * 1e3 for c in colds],
        labels=["compiled float32", f"compiled {dtype}"],
        max_time=math.inf,  # every side gets `min_time` of kept blocks, as the eager run's
    )
    plain_stats, lower_stats = timing.stats
    recompiles = compiled_graphs() - after_first
    plain_error, _ = reference.compare(outputs[0])
    error, agreement = reference.compare(outputs[1])
    notes = [
        f"compiled in {compile_s:.1f} s ({graphs} graph{'s' if graphs != 1 else ''})",
        f"compiled float32 vs eager float32: {_closeness(plain_error)}",
    ]
    if reference.lower_logits is not None:
        compiled_lower = first_tensor(outputs[1])
        if compiled_lower is not None and compiled_lower.shape == reference.lower_logits.shape:
            versus = layer_error(reference.lower_logits, compiled_lower)
            notes.append(f"compiled {dtype} vs eager {dtype}: {_closeness(versus)}")
    if graphs > len(compiled):
        notes.append(
            f"Dynamo split the model into {graphs} graphs for {len(compiled)} functions: "
            "what lies between them (graph breaks) ran eagerly"
        )
    if recompiles:
        notes.append(f"{recompiles} recompile{'s' if recompiles != 1 else ''} while timing")
    return RouteResult(
        name="compiled",
        lower_dtype=dtype,
        plain=plain_stats,
        lower=lower_stats,
        output_dtype=_dtypes(outputs),
        error=error,
        plain_error=plain_error,
        agreement=agreement,
        compile_s=compile_s,
        compile_estimate_s=estimate,
        graphs=graphs,
        recompiles=recompiles,
        graph_ops=ops,
        finding="; ".join(notes),
        interval=timing.interval,
    )


def _closeness(error: LayerError | None) -> str:
    """'identical' or the SQNR, as a finding says how close two outputs are."""
    if error is None:
        return "not comparable (other shape)"
    if error.nonfinite:
        return f"{error.nonfinite} of {error.numel} values not finite (NaN or inf)"
    return "identical" if error.identical else f"SQNR {error.sqnr_db:.1f} dB"


def _compile_failed(
    dtype: str,
    side: str,
    exc: Exception,
    colds: list[float],
    ops: dict[str, int],
    estimate: float | None,
    reference: Reference,
    outputs: list[object],
) -> RouteResult:
    """The route as far as it got: the message says which side failed and torch's words."""
    plain_error = reference.compare(outputs[0])[0] if outputs else None
    return RouteResult(
        name="compiled",
        lower_dtype=dtype,
        output_dtype=_dtypes(outputs),
        plain_error=plain_error,
        compile_s=sum(colds) if colds else None,
        compile_estimate_s=estimate,
        graph_ops=ops,
        finding=f"torch.compile of the {side} forward failed here: {error_text(exc)}",
    )


def _dtypes(outputs: list[object]) -> dict[str, str]:
    found = {}
    for side, output in zip(("plain", "lower"), outputs, strict=False):
        tensor = first_tensor(output)
        if tensor is not None:
            found[side] = dtype_name(tensor.dtype)
    return found


# ---- implicit ----------------------------------------------------------------------------
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


def implicit_kernels(model: torch.nn.Module, x: torch.Tensor) -> tuple[list[str], list[str]]:
    """oneDNN's GEMMs in one forward under the implicit setting, and those with bf16 maths."""

    def forward() -> None:
        with torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON), implicit_precision():
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
) -> RouteResult:
    """Float32 vs float32 with oneDNN's fp32_precision lowered to bf16, timed ABAB."""
    dtype = "bfloat16"
    if not implicit_supported():
        return RouteResult(
            "implicit",
            dtype,
            finding=f"torch {torch.__version__} has no torch.backends.mkldnn.matmul.fp32_precision",
        )
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
        output_dtype=_dtypes([plain_output, lower_output]),
        error=error,
        plain_error=plain_error,
        agreement=agreement,
        kernels=tuple(lowered),
        finding=implicit_finding(gemms, lowered, identical, log_error),
        interval=timing.interval,
    )

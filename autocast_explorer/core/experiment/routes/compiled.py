"""compiled: `torch.compile` (inductor) of the float32 forward vs of a function with autocast
inside. Compile time (the first call of each) is kept apart from the steady state, which is
timed by the same protocol as eager; graphs compiled after the first calls are recompiles. A
compile that fails here (no C++ compiler, one this CPU cannot do) is a finding, not a failure.
Layers the run keeps in float32 are compiled kept (their wrapped forwards are traced); the
finding then says in which dtypes the compiled lower graph's matrix products ran."""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch

from autocast_explorer.core.experiment import guards
from autocast_explorer.core.experiment.capture import first_tensor
from autocast_explorer.core.experiment.dynamo_start import dynamo_refusal
from autocast_explorer.core.experiment.routes.common import (
    Reference,
    RouteCall,
    closeness,
    output_dtypes,
)
from autocast_explorer.core.experiment.routes.result import RouteResult
from autocast_explorer.core.experiment.shadow_run import leaf_modules
from autocast_explorer.core.experiment.timing import measure_paired
from autocast_explorer.core.numerics.compute import PRODUCT_OPS
from autocast_explorer.core.numerics.layer_error import layer_error
from autocast_explorer.core.runtime.autocast import autocast_context
from autocast_explorer.core.runtime.dtypes import dtype_name
from autocast_explorer.core.runtime.errors import error_text


def _op_name(gm: torch.fx.GraphModule, node: torch.fx.Node) -> str:
    if node.op == "call_module":
        return type(gm.get_submodule(str(node.target))).__name__
    if node.op == "call_method":
        return f".{node.target}"
    return getattr(node.target, "__name__", str(node.target))


def _recording_backend(
    ops: dict[str, int], products: list[Counter[str]] | None = None
) -> Callable[..., Any]:
    """inductor, after counting the ops of each graph Dynamo hands it (and, per graph, the
    dtypes its matrix products computed in, from Dynamo's example values)."""

    def backend(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> Any:
        from torch._inductor.compile_fx import compile_fx

        dtypes: Counter[str] = Counter()
        for node in gm.graph.nodes:
            if node.op in ("call_function", "call_method", "call_module"):
                op = _op_name(gm, node)
                ops[op] = ops.get(op, 0) + 1
                value = node.meta.get("example_value")
                if op in PRODUCT_OPS and isinstance(value, torch.Tensor):
                    dtypes[dtype_name(value.dtype)] += 1
        if products is not None:
            products.append(dtypes)
        return compile_fx(gm, example_inputs)

    return backend


def compiled_graphs() -> int:
    """Graphs Dynamo has compiled in this process (its `unique_graphs` counter)."""
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def _compiled_sides(
    model: torch.nn.Module, low: torch.dtype, backend: Callable[..., Any]
) -> list[Callable[[torch.Tensor], object]]:
    """The float32 forward and one with autocast inside, each compiled (lazily) by `backend`."""

    def plain_fn(inp: torch.Tensor) -> object:
        return model(inp)

    def lower_fn(inp: torch.Tensor) -> object:
        with autocast_context(low):
            return model(inp)

    return [torch.compile(plain_fn, backend=backend), torch.compile(lower_fn, backend=backend)]


#: Why Dynamo's reset failed in this process, once it did (its import: dynamo_start).
_reset_refusal: list[str] = []


def _start_dynamo(dtype: str) -> RouteResult | None:
    """Import Dynamo and clear its cache (one session compiles many models); None when ready,
    else the route's finding. Its import makes inductor's cache folder, which can fail."""
    refusal = dynamo_refusal()
    if not refusal and not _reset_refusal:
        try:
            import torch._dynamo

            torch._dynamo.reset()
        except Exception as exc:
            _reset_refusal.append(f"torch.compile could not start here ({error_text(exc)})")
    refusal = refusal or (_reset_refusal[0] if _reset_refusal else "")
    if refusal:
        return RouteResult(name="compiled", lower_dtype=dtype, finding=f"not compiled: {refusal}")
    return None


def compiled_route(call: RouteCall) -> RouteResult:
    """torch.compile of the float32 forward and of one with autocast inside, then timed."""
    model, x, low, reference, reporter = call.model, call.x, call.low, call.reference, call.reporter
    dtype = dtype_name(low)
    leaves = leaf_modules(model)
    try:
        estimate = guards.check_compile(leaves, call.allow_slow)
    except guards.GuardError as exc:
        return RouteResult(name="compiled", lower_dtype=dtype, finding=f"not compiled: {exc.rule}")
    refusal = _start_dynamo(dtype)
    if refusal is not None:
        return refusal
    ops: dict[str, int] = {}
    products: list[Counter[str]] = []  # per graph, in compile order
    compiled = _compiled_sides(model, low, _recording_backend(ops, products))
    start_graphs = compiled_graphs()
    colds: list[float] = []
    outputs: list[object] = []
    lower_from = 0  # the first graph the lower side compiled
    for i, side in enumerate(("float32", dtype)):
        lower_from = len(products)
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
    lower_products = sum(products[lower_from:], Counter[str]())
    guards.record_compile(compile_s, leaves)
    after_first = compiled_graphs()
    timing = measure_paired(
        [lambda: compiled[0](x), lambda: compiled[1](x)],
        call.min_time,
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
        f"compiled float32 vs eager float32: {closeness(plain_error)}",
        *_compiled_notes(reference, outputs[1], dtype, graphs, len(compiled), recompiles),
        *_kept_notes(call.kept, dtype, lower_products),
    ]
    return RouteResult(
        name="compiled",
        lower_dtype=dtype,
        plain=plain_stats,
        lower=lower_stats,
        output_dtype=output_dtypes(outputs),
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


def _compiled_notes(
    reference: Reference,
    lower_output: object,
    dtype: str,
    graphs: int,
    functions: int,
    recompiles: int,
) -> list[str]:
    """What the finding adds after the compile time: how close the compiled lower side is to
    eager's, graph breaks, and recompiles while timing."""
    notes = []
    if reference.lower_logits is not None:
        compiled_lower = first_tensor(lower_output)
        if compiled_lower is not None and compiled_lower.shape == reference.lower_logits.shape:
            versus = layer_error(reference.lower_logits, compiled_lower)
            notes.append(f"compiled {dtype} vs eager {dtype}: {closeness(versus)}")
    if graphs > functions:
        notes.append(
            f"Dynamo split the model into {graphs} graphs for {functions} functions: "
            "what lies between them (graph breaks) ran eagerly"
        )
    if recompiles:
        notes.append(f"{recompiles} recompile{'s' if recompiles != 1 else ''} while timing")
    return notes


def _kept_notes(kept: tuple[str, ...], dtype: str, products: Counter[str]) -> list[str]:
    """What keeping did in the compiled lower graph: its matrix products by dtype."""
    if not kept:
        return []
    ran = ", ".join(f"{n}× in {d}" for d, n in sorted(products.items())) or "none"
    return [
        f"kept in float32: {', '.join(kept)}; the compiled {dtype} graph's matrix products "
        f"ran {ran}"
    ]


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
        output_dtype=output_dtypes(outputs),
        plain_error=plain_error,
        compile_s=sum(colds) if colds else None,
        compile_estimate_s=estimate,
        graph_ops=ops,
        finding=f"torch.compile of the {side} forward failed here: {error_text(exc)}",
    )


#: The route's `measure` (common.Measure), found through its registration.
measure = compiled_route

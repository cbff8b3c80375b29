"""run_experiment: one config in, one measured ExperimentResult out.

Order of work: guards (nothing allocated yet) → build model and input as the tutorial does →
cold first calls → one hooked forward per mode (dtypes, logits, per-layer error) → one traced
forward per mode (aten ops, casts) → ABAB timing, paired, until the speedup's interval is
within ±5% or the config's time limit is spent (the machine's load measured meanwhile). Threads
are set for the duration of the run, in the calling thread, and restored afterwards.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch

from autocast_explorer.core.data.dataset import Dataset
from autocast_explorer.core.experiment import guards
from autocast_explorer.core.experiment.agreement import Agreement, compare_logits
from autocast_explorer.core.experiment.capture import (
    LayerDtypes,
    LayerRecord,
    marked_kept,
    pair_layers,
    record_forward,
)
from autocast_explorer.core.experiment.certainty import RUN_TARGET, TimingEvidence
from autocast_explorer.core.experiment.config import (
    ExperimentConfig,
)
from autocast_explorer.core.experiment.config_parts import DEFAULT_ROUTES, MAX_STEPS
from autocast_explorer.core.experiment.data_run import fitted, prepare, train_data_info
from autocast_explorer.core.experiment.data_task import data_task
from autocast_explorer.core.experiment.families import family
from autocast_explorer.core.experiment.families.user.guard import user_phase
from autocast_explorer.core.experiment.families.user.info import ModelInfo
from autocast_explorer.core.experiment.families.user.probe import probe
from autocast_explorer.core.experiment.families.user.record import (
    no_argmax_reason,
    rows_at_depth,
    user_rows,
)
from autocast_explorer.core.experiment.forecast import ConfirmFn, ask_if_long, forecast
from autocast_explorer.core.experiment.interventions import keeping
from autocast_explorer.core.experiment.model import build, low_precision_dtype
from autocast_explorer.core.experiment.out_of_memory import is_out_of_memory
from autocast_explorer.core.experiment.result import (
    SCHEMA,
    ExperimentResult,
    LatencySection,
    OutputDtypes,
)
from autocast_explorer.core.experiment.routes import (
    Reference,
    RouteCall,
    RouteResult,
    eager_route,
    measure_route,
)
from autocast_explorer.core.experiment.timing import (
    LatencyStats,
    cold_call_ms,
    measure_paired,
)
from autocast_explorer.core.experiment.train_report import TrainReport
from autocast_explorer.core.experiment.training import PartialFn, TrainingRun, train_side_by_side
from autocast_explorer.core.hardware.cpu import environment
from autocast_explorer.core.hardware.load import LoadMeter
from autocast_explorer.core.hardware.memory import PeakMemory
from autocast_explorer.core.numerics.compute import ComputeDtypes, compute_by_layer
from autocast_explorer.core.numerics.optrace import OpTrace, trace_model
from autocast_explorer.core.runtime.autocast import autocast_context
from autocast_explorer.core.runtime.dtypes import dtype_name
from autocast_explorer.core.runtime.errors import error_text
from autocast_explorer.core.runtime.progress import CancelFn, ProgressFn, Reporter
from autocast_explorer.core.runtime.threads import torch_threads


def forward_fns(
    model: torch.nn.Module, x: torch.Tensor, dtype: torch.dtype
) -> tuple[Callable[[], torch.Tensor], Callable[[], torch.Tensor]]:
    """The two timed callables; autocast is entered around each forward, as the tutorial does.

    Call them under `torch.no_grad()`, entered once around the whole timed loop as in the
    tutorial: entering it per call would add its ~1 µs to every sample.
    """

    def plain() -> torch.Tensor:
        out: torch.Tensor = model(x)
        return out

    def auto() -> torch.Tensor:
        with autocast_context(dtype):
            out: torch.Tensor = model(x)
        return out

    return plain, auto


def fast_path_ran(config: ExperimentConfig, called: list[str]) -> bool | None:
    """For the transformer: whether torch's fused encoder kernel ran (None for other models)."""
    fused = getattr(family(config), "fused", None)
    return None if fused is None else bool(fused(called))


def run_experiment(
    config: ExperimentConfig,
    progress: ProgressFn | None = None,
    cancel: CancelFn | None = None,
    partial: PartialFn | None = None,
    confirm: ConfirmFn | None = None,
) -> ExperimentResult:
    """Measure `config` plain vs autocast. Raises GuardError, Cancelled, or torch's errors.

    In training mode (`config.mode == "train"`) both copies are trained and `partial` receives
    each step's losses as they complete. A run forecast to take over ANNOUNCE_ABOVE_S seconds
    is shown to `confirm` before anything is built; False cancels it (Cancelled).

    An autocast forward that raises is not an error of the run: float32 is still measured and
    the result carries `autocast_error` (the message) with no autocast latency or agreement.
    Memory running out (either side) raises OutOfMemory instead: it says nothing of autocast.
    """
    with guards.memory_outcome(config):
        return _run_experiment(config, Reporter(progress, cancel), partial, confirm)


def _run_experiment(
    config: ExperimentConfig,
    reporter: Reporter,
    partial: PartialFn | None,
    confirm: ConfirmFn | None = None,
) -> ExperimentResult:
    """Real data is read first and the config fitted to it: the guards judge the fitted config.
    The result's `guard` holds the forecasts and the peak memory the run then reached."""
    dataset = None
    if config.data != "synthetic":
        reporter.report(0.0, f"reading the data ({config.data})")
        config, dataset = fitted(config)
    reporter.report(0.0, "checking memory and time guards")
    estimate = guards.check_estimate(config)
    ahead = forecast(config, estimate)
    estimate = estimate.model_copy(update={"forecast_s": ahead.seconds})
    reporter.check()
    ask_if_long(ahead, confirm, reporter)
    meter = PeakMemory()
    if config.mode == "train":
        result = run_training(config, reporter, partial, estimate, dataset)
    else:
        result = run_inference(config, reporter, estimate, dataset)
    peak = meter.stop()
    if peak is None:
        return result
    measured = estimate.model_copy(update={"memory_peak_mb": peak / 2**20})
    return result.model_copy(update={"guard": measured})


def run_inference(
    config: ExperimentConfig,
    reporter: Reporter,
    estimate: guards.ForwardEstimate | None = None,
    dataset: Dataset | None = None,
) -> ExperimentResult:
    """Measure forwards plain vs autocast: cold calls, one recorded forward per mode, one
    traced, then the paired timing (and any other route's), under the config's threads, with
    the config's layers kept in float32 throughout (a pattern that names none is refused
    before anything is measured)."""
    prepared = None
    with torch_threads(config.threads) as threads, torch.no_grad(), contextlib.ExitStack() as scope:
        if dataset is not None:
            prepared = prepare(config, dataset, reporter.span(0.01, 0.5))
            model, x = prepared.model, prepared.x
            reporter = reporter.span(0.5, 1.0)
        else:
            reporter.report(0.02, "building model")
            model, x = build(config)
        kept = scope.enter_context(keeping(model, config.keep_float32))
        low = low_precision_dtype(config)
        plain_fn, auto_fn = forward_fns(model, x, low)
        reporter.check()
        cold = _cold_calls(config, plain_fn, auto_fn, reporter)
        seen = _record_forwards(config, model, x, low, cold.autocast_error, reporter)
        layers, op_trace = seen.layers, None
        if not seen.autocast_error:
            reporter.report(0.08, "tracing the aten ops of one forward per mode")
            with user_phase(config, "tracing the aten ops"):
                op_trace = trace_model(model, x, low, check=reporter.check)
            layers = with_compute_dtypes(layers, op_trace)
            reporter.check()
        layers = marked_kept(layers, kept)
        # Eager's timing gets its share of the bar; every other route the same share after it.
        share = 0.9 / len(config.routes)
        plain_stats, auto_stats, evidence = _time_forwards(
            config, (plain_fn, auto_fn), cold, seen.autocast_error, reporter.span(0.1, 0.1 + share)
        )
        routes: tuple[RouteResult, ...] = ()
        if config.routes != DEFAULT_ROUTES:
            eager = eager_route(
                plain_stats,
                auto_stats,
                config.dtype,
                seen.reference,
                seen.auto_logits,
                seen.autocast_error,
                evidence.interval,
            )
            call = RouteCall(
                model, x, low, seen.reference, config.min_time, reporter, config.allow_slow, kept
            )
            routes = (eager, *_other_routes(config, call, share))
    reporter.report(1.0, "done")
    return ExperimentResult(
        schema_=SCHEMA,
        created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        config=config,
        environment=environment(threads),
        latency=LatencySection.of(
            plain_stats, auto_stats, None if seen.autocast_error else evidence
        ),
        flops_per_forward=family(config).flops(config),
        output_dtype=OutputDtypes(plain=seen.plain_dtype, autocast=seen.auto_dtype or None),
        layers=layers,
        agreement=seen.agreement,
        warnings=tuple(noise_warnings(config, plain_stats, auto_stats)),
        autocast_error=seen.autocast_error,
        fast_path=seen.fast_path,
        **(op_trace.sections() if op_trace is not None else {}),
        guard=estimate,
        data=prepared.info if prepared is not None else None,
        accuracy=prepared.accuracy if prepared is not None else None,
        model_info=seen.model_info,
        input=family(config).record_input(config, model, [x]),
        routes=routes,
    )


@dataclass(frozen=True)
class ColdCalls:
    """Each mode's first call, timed before hooks or warm-up touch the model; an autocast
    first call that raised leaves `autocast_ms` None and says why in `autocast_error`."""

    plain_ms: float
    autocast_ms: float | None
    autocast_error: str


def _cold_calls(
    config: ExperimentConfig,
    plain_fn: Callable[[], torch.Tensor],
    auto_fn: Callable[[], torch.Tensor],
    reporter: Reporter,
) -> ColdCalls:
    """An autocast forward that raises is a finding, not an error of the run (memory running
    out is no finding about autocast: it is raised as it came)."""
    reporter.report(0.04, "first (cold) calls")
    with user_phase(config, "the first (cold) calls"):
        cold_plain = cold_call_ms(plain_fn)
        reporter.check()
        cold_auto, autocast_error = None, ""
        try:
            cold_auto = cold_call_ms(auto_fn)
        except Exception as exc:
            if is_out_of_memory(exc):
                raise
            autocast_error = error_text(exc)
    reporter.check()
    return ColdCalls(cold_plain, cold_auto, autocast_error)


@dataclass(frozen=True)
class RecordedForwards:
    """What one hooked forward per mode saw: the layers' dtypes, the outputs' agreement and
    dtypes, which transformer path ran, and the float32 output later routes are judged by."""

    layers: tuple[LayerRecord, ...]
    model_info: ModelInfo | None
    agreement: Agreement | None
    fast_path: dict[str, bool] | None
    plain_dtype: str
    auto_dtype: str
    auto_logits: torch.Tensor | None
    reference: Reference
    autocast_error: str


def _record_forwards(
    config: ExperimentConfig,
    model: torch.nn.Module,
    x: torch.Tensor,
    low: torch.dtype,
    autocast_error: str,
    reporter: Reporter,
) -> RecordedForwards:
    """One hooked forward per mode, outputs kept only as long as they are compared (an autocast
    forward that raises here sets `autocast_error` as its cold call would have)."""
    reporter.report(0.06, "capturing dtypes and error per layer")
    with user_phase(config, "capturing each layer's dtypes"):
        plain = record_forward(model, x, None, keep_outputs=True)
        if plain.raised is not None:
            raise plain.raised  # float32 failing is no finding: the run cannot go on
        reporter.check()
        auto = record_forward(model, x, low, keep_outputs=True)
    if plain.logits is None:
        raise RuntimeError("the float32 forward recorded no output")
    autocast_error = autocast_error or auto.error
    agreement = None
    if not autocast_error and auto.logits is not None:
        agreement = compare_logits(
            plain.logits,
            auto.logits,
            config.atol,
            config.rtol,
            config.topk,
            no_argmax_reason(config),
        )
    layers = tuple(pair_layers(plain.layers, auto.layers))
    model_info = None
    if config.is_user_model:
        layers, model_info = user_rows(config, layers)
    fast_path = None
    ran_plain = fast_path_ran(config, [c.name for c in plain.layers])
    if ran_plain is not None:
        fast_path = {"plain": ran_plain}
        if not autocast_error:
            fast_path["autocast"] = bool(fast_path_ran(config, [c.name for c in auto.layers]))
    auto_logits = None if autocast_error else auto.logits
    recorded = RecordedForwards(
        layers=layers,
        model_info=model_info,
        agreement=agreement,
        fast_path=fast_path,
        plain_dtype=dtype_name(plain.logits.dtype),
        auto_dtype=dtype_name(auto.logits.dtype) if auto.logits is not None else "",
        auto_logits=auto_logits,
        reference=Reference(plain.logits, config.atol, config.rtol, config.topk, auto_logits),
        autocast_error=autocast_error,
    )
    del plain, auto  # the kept outputs are no longer needed
    reporter.check()
    return recorded


def _time_forwards(
    config: ExperimentConfig,
    fns: tuple[Callable[[], torch.Tensor], Callable[[], torch.Tensor]],
    cold: ColdCalls,
    autocast_error: str,
    reporter: Reporter,
) -> tuple[LatencyStats, LatencyStats | None, TimingEvidence]:
    """The paired ABAB timing to the run's target, with the machine's load measured meanwhile;
    float32 alone, on its fixed budget, when the autocast forward raised."""
    plain_fn, auto_fn = fns
    meter = LoadMeter()
    with user_phase(config, "timing the forwards"):
        if autocast_error or cold.autocast_ms is None:
            timing = measure_paired(
                [plain_fn], config.min_time, reporter, cold_ms=[cold.plain_ms], labels=["float32"]
            )
            (plain_stats,), auto_stats = timing.stats, None
        else:
            timing = measure_paired(
                [plain_fn, auto_fn],
                config.min_time,
                reporter,
                cold_ms=[cold.plain_ms, cold.autocast_ms],
                labels=["float32", config.dtype],
                max_time=config.time_limit,
                target=RUN_TARGET,
            )
            plain_stats, auto_stats = timing.stats
    return plain_stats, auto_stats, TimingEvidence.from_timing(timing, meter.stop())


def _other_routes(config: ExperimentConfig, call: RouteCall, share: float) -> Iterator[RouteResult]:
    """Every route after eager (the reference), each timed in its share of the bar (`call`'s
    reporter spans the whole run)."""
    for i, name in enumerate(config.routes[1:], start=1):
        span = call.reporter.span(0.1 + share * i, 0.1 + share * (i + 1))
        with user_phase(config, f"the {name} route"):
            measured = measure_route(name, dataclasses.replace(call, reporter=span))
        yield measured


def with_compute_dtypes(
    layers: tuple[LayerRecord, ...], op_trace: OpTrace
) -> tuple[LayerRecord, ...]:
    """The layers with what each computed in, per mode, from the op trace's attributed ops.

    A layer whose traced output dtype differs from the untraced one (a kernel the tracer
    changes; torch's fused encoder layer did before the tracer re-ran ops under autocast) gets
    none: its traced ops would not be what it computed in.
    """
    found = {
        "plain": compute_by_layer(op_trace.plain),
        "autocast": compute_by_layer(op_trace.autocast),
    }

    def side(mode: str, name: str, dtypes: LayerDtypes) -> LayerDtypes:
        traced = op_trace.layer_outputs.get(mode, {}).get(name)
        if traced is None or traced != dtypes.out_dtype:
            return dtypes
        return LayerDtypes.of(
            dtypes.in_dtype, dtypes.out_dtype, found[mode].get(name, ComputeDtypes())
        )

    return tuple(
        layer.model_copy(
            update={
                "plain": side("plain", layer.name, layer.plain),
                "autocast": None
                if layer.autocast is None
                else side("autocast", layer.name, layer.autocast),
            }
        )
        for layer in layers
    )


def noise_warnings(
    config: ExperimentConfig, plain: LatencyStats, autocast: LatencyStats | None
) -> list[str]:
    """torch.utils.benchmark's rule, in words: which mode's timings were noisy."""
    warnings = []
    for label, stats in (("float32", plain), (config.dtype, autocast)):
        if stats is not None and stats.noisy:
            warnings.append(
                f"{label} timings are noisy: IQR is {stats.iqr_ms / stats.median_ms:.0%} "
                "of the median; close other programs or raise the measurement time"
            )
    return warnings


def run_training(
    config: ExperimentConfig,
    reporter: Reporter,
    partial: PartialFn | None = None,
    estimate: guards.ForwardEstimate | None = None,
    dataset: Dataset | None = None,
) -> ExperimentResult:
    """Train a float32 and an autocast copy side by side, then time training steps.

    The latency entries hold the time of one training step (forward + loss + backward +
    optimizer step) measured with the same ABAB protocol as forwards, on the trained copies
    continuing on the task's batches; `extras["train"]` holds everything else.
    """
    task, epoch_steps, info = None, 0, None
    if dataset is not None:  # real rows: `epochs` epochs of the training rows, scored each epoch
        task = data_task(config, dataset)
        epoch_steps = task.steps_per_epoch
        config = config.replace(steps=min(MAX_STEPS, config.epochs * epoch_steps))
        info = train_data_info(dataset, task, config.epochs)
    with torch_threads(config.threads) as threads:
        run = train_side_by_side(
            config, reporter.span(0.02, 0.7), partial, task=task, epoch_steps=epoch_steps
        )
        agreement = compare_logits(
            run.held_out_logits["plain"],
            run.held_out_logits["autocast"],
            config.atol,
            config.rtol,
            config.topk,
            no_argmax_reason(config),
        )
        reporter.check()
        plain_stats, auto_stats, evidence = _time_training_steps(
            config, run, reporter.span(0.7, 1.0)
        )
    report = run.report
    model_info = None
    if config.is_user_model:  # the same rows and record as its inference run
        _shown, model_info = rows_at_depth(config, probe(config).module_names)
    reporter.report(1.0, "done")
    return ExperimentResult(
        schema_=SCHEMA,
        created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        config=config,
        environment=environment(threads),
        latency=LatencySection.of(plain_stats, auto_stats, evidence),
        flops_per_forward=training_step_flops(config),
        output_dtype=OutputDtypes(
            plain=report.output_dtype["plain"], autocast=report.output_dtype["autocast"]
        ),
        layers=marked_kept(_training_layers(report), run.kept),
        agreement=agreement,
        warnings=tuple(_training_warnings(config, report, plain_stats, auto_stats)),
        guard=estimate,
        train=report,
        data=info,
        model_info=model_info,
        input=family(config).record_input(config, run.trainers["plain"].model, run.task.inputs()),
    )


def _time_training_steps(
    config: ExperimentConfig, run: TrainingRun, reporter: Reporter
) -> tuple[LatencyStats, LatencyStats, TimingEvidence]:
    """Training steps of the trained copies, timed by the forwards' paired ABAB protocol."""
    meter = LoadMeter()
    with user_phase(config, "timing training steps"):
        timing = measure_paired(
            [
                run.trainers["plain"].timed_step(run.task),
                run.trainers["autocast"].timed_step(run.task),
            ],
            config.min_time,
            reporter,
            cold_ms=run.cold_ms,
            labels=["float32 training step", f"{config.dtype} training step"],
            max_time=config.time_limit,
            target=RUN_TARGET,
        )
    plain_stats, auto_stats = timing.stats
    return plain_stats, auto_stats, TimingEvidence.from_timing(timing, meter.stop())


def _training_layers(report: TrainReport) -> tuple[LayerRecord, ...]:
    """The probed step's forward dtypes as the result's layer rows, as an inference run has."""
    return tuple(
        LayerRecord(
            name=t.name,
            kind=t.kind,
            plain=LayerDtypes.of(*t.forward["plain"]),
            autocast=LayerDtypes.of(*t.forward["autocast"]),
        )
        for t in report.layers
    )


def _training_warnings(
    config: ExperimentConfig, report: TrainReport, plain: LatencyStats, autocast: LatencyStats
) -> list[str]:
    """The timings' noise and any autocast step whose loss was not finite."""
    warnings = noise_warnings(config, plain, autocast)
    if report.nonfinite_steps.get("autocast"):
        warnings.append(
            f"{report.nonfinite_steps['autocast']} {config.dtype} steps had a non-finite loss"
        )
    return warnings


def training_step_flops(config: ExperimentConfig) -> int:
    """One training step's FLOPs, as the config's family counts them."""
    return family(config).training_step_flops(config)

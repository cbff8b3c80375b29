"""Running a sweep: every point measured plain vs autocast, streamed as it completes.

Order of work: plan every point (bad values refused) → memory and time guards on every point
(a sweep that would stall at point 9 is refused before point 1) → points in order, each timed
with the same ABAB protocol as a single run → a oneDNN probe → verdict and roofline.

Each point's measurement budget is `config.min_time` seconds in total, split equally between
the two modes, and `adaptive=False` spends it all on every point. Adaptive (the default): a
point stops as soon as its speedup's interval is within ±3% (SWEEP_TARGET), and the sweep's
time goes where intervals are wide and can still close (budget.py: a share of the fixed
sweep's in all). Cold calls count toward it and a slow mode's warm-ups are kept as samples, so
an N-point sweep costs about N × min_time even where one mode's forwards are slow (a mode still
needs a cold call and 3 timed calls). Points that share
widths share one model (built once, input drawn from the RNG state right after the model, so
every point is what a single run of its config would build).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import time
from collections.abc import Callable, Sequence

import torch

from autocast_explorer.core.experiment import guards, timing
from autocast_explorer.core.experiment.capture import AutocastFailed
from autocast_explorer.core.experiment.certainty import NOISY_WIDTH, SWEEP_TARGET, TimingEvidence
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import forward_fns
from autocast_explorer.core.experiment.families import family
from autocast_explorer.core.experiment.families.user.guard import user_phase
from autocast_explorer.core.experiment.forecast import (
    ConfirmFn,
    ask_if_long,
    forecast_sweep,
    point_seconds,
)
from autocast_explorer.core.experiment.interventions import keeping, kept_layers
from autocast_explorer.core.experiment.model import build_input, build_model, low_precision_dtype
from autocast_explorer.core.experiment.out_of_memory import is_out_of_memory
from autocast_explorer.core.experiment.routes import (
    Reference,
    RouteCall,
    RouteResult,
    measure_route,
)
from autocast_explorer.core.experiment.timing import TargetBudget, cold_call_ms, measure_paired
from autocast_explorer.core.hardware import onednn
from autocast_explorer.core.hardware.cpu import Environment, environment
from autocast_explorer.core.hardware.load import LoadMeter
from autocast_explorer.core.runtime.errors import ConfigError, error_text
from autocast_explorer.core.runtime.progress import CancelFn, ProgressFn, Reporter
from autocast_explorer.core.runtime.threads import torch_threads
from autocast_explorer.core.sweeps.budget import ADAPTIVE_MIN_SHARE, PointAllowance, SweepBudget
from autocast_explorer.core.sweeps.points import PointLatency, SweepPoint, roofline_work
from autocast_explorer.core.sweeps.result import SCHEMA, SweepResult
from autocast_explorer.core.sweeps.roofline import (
    build_roofline_from_work,
    flops_formula,
)
from autocast_explorer.core.sweeps.spec import PlannedPoint, SweepSpec, default_values
from autocast_explorer.core.sweeps.verdict import HardwareVerdict, hardware_verdict

PointFn = Callable[[SweepPoint], None]
_POINT_OVERHEAD_S = 0.005
#: A point is flagged when its forward took over STALL_FACTOR × max(estimate, STALL_FLOOR_S).
STALL_FACTOR = 20.0
STALL_FLOOR_S = 2e-4
STALL_BANDWIDTH = 5e9
#: Share of the progress bar for the points; the rest is the oneDNN probe and the verdict.
_POINTS_SHARE = 0.98


def run_sweep(
    config: ExperimentConfig,
    param: str,
    values: Sequence[int] | None = None,
    progress: ProgressFn | None = None,
    cancel: CancelFn | None = None,
    on_point: PointFn | None = None,
    probe_onednn: bool = True,
    adaptive: bool = True,
) -> SweepResult:
    """Sweep `param` ('batch' or 'width': every hidden width) over `values`.

    `values` None means the log-spaced defaults (`sweep_spec.default_values`). `on_point` is
    called with each SweepPoint as it completes, in order. Raises ConfigError/GuardError
    (naming the offending value) before measuring anything, Cancelled between points or
    timing blocks.
    """
    spec = SweepSpec(param, tuple(values) if values is not None else default_values(param))
    return run_spec(config, spec, progress, cancel, on_point, probe_onednn, adaptive)


def run_grid(
    config: ExperimentConfig,
    batch_values: Sequence[int] | None = None,
    width_values: Sequence[int] | None = None,
    progress: ProgressFn | None = None,
    cancel: CancelFn | None = None,
    on_point: PointFn | None = None,
    probe_onednn: bool = True,
    adaptive: bool = True,
) -> SweepResult:
    """A batch × width grid, one width row at a time (see `run_sweep`)."""
    spec = SweepSpec(
        "batch",
        tuple(batch_values) if batch_values is not None else default_values("batch"),
        tuple(width_values) if width_values is not None else default_values("width"),
    )
    return run_spec(config, spec, progress, cancel, on_point, probe_onednn, adaptive)


def _point_routes(
    config: ExperimentConfig,
    model: torch.nn.Module,
    x: torch.Tensor,
    low: torch.dtype,
    plain_fn: Callable[[], torch.Tensor],
    auto_fn: Callable[[], torch.Tensor],
    report: ProgressFn,
    cancel: CancelFn | None,
    kept: tuple[str, ...],
) -> tuple[RouteResult, ...]:
    """The point's routes beyond eager, compared with its eager float32 output (the `kept`
    layers kept in float32 on every route)."""
    extra = config.routes[1:]  # after the reference, which the point measured itself
    if not extra:
        return ()
    reference = Reference(plain_fn(), config.atol, config.rtol, config.topk, auto_fn())
    reporter = Reporter(report, cancel)
    call = RouteCall(
        model, x, low, reference, config.min_time / 2, reporter, config.allow_slow, kept
    )
    return tuple(measure_route(name, call) for name in extra)


def check_points(planned: Sequence[PlannedPoint]) -> list[float]:
    """Memory and time guards on every point, then the layers it keeps in float32; returns
    each point's forward estimate (s).

    A refusal names the point: "memory: batch 4096: this model needs about …"; so does memory
    running out while a user model is probed there ("out of memory at image side 4096: …"),
    and a pattern that names no layer of a point's model ("keep_float32: depth 1: …").
    """
    estimates = []
    for point in planned:
        try:
            with guards.memory_outcome(point.config, point.name):
                estimates.append(guards.check(point.config))
        except guards.GuardError as exc:
            raise guards.GuardError(exc.field, f"{point.name}: {exc.rule}") from None
    _check_kept(planned)
    return estimates


def _check_kept(planned: Sequence[PlannedPoint]) -> None:
    """Each point's model has the layers its config keeps (each model built once to match the
    patterns, and only when there are any)."""
    checked: set[tuple[tuple[str, str], ...]] = set()
    for point in planned:
        config = point.config
        if not config.keep_float32 or _model_key(config) in checked:
            continue
        checked.add(_model_key(config))
        with guards.memory_outcome(config, point.name), user_phase(config, point.name):
            try:
                kept_layers(build_model(config), config.keep_float32)
            except ConfigError as exc:
                raise ConfigError(exc.field, f"{point.name}: {exc.rule}") from None


def stalled_points(
    points: Sequence[SweepPoint],
    estimates: Sequence[float],
    factor: float = STALL_FACTOR,
    floor_s: float = STALL_FLOOR_S,
    bandwidth: float = STALL_BANDWIDTH,
) -> list[int]:
    """Indexes of points whose forwards ran far slower than this CPU should manage.

    On a shared machine, when another program holds a core, torch's worker threads wait for
    each other at every op and a 0.05 ms forward takes 25 ms; IQR stays small, so only a
    comparison with an expectation shows it. The expectation is the largest of the guard's
    FLOP estimate, the bytes moved at a modest `bandwidth` (memory-bound forwards) and a
    floor (tiny forwards are overhead-bound).
    """
    out = []
    for i, (point, estimate) in enumerate(zip(points, estimates, strict=False)):
        slowest = max(point.plain.median_ms, point.autocast.median_ms) / 1e3
        traffic = max(point.bytes_plain, point.bytes_autocast) / bandwidth
        if slowest > factor * max(estimate, traffic, floor_s):
            out.append(i)
    return out


def told_speedups(points: Sequence[SweepPoint]) -> list[float]:
    """Each point's speedup, NaN where its call could not tell (too noisy, or can't tell): a
    verdict states nothing from such a point."""
    return [p.told_speedup for p in points]


def _format_eta(seconds: float) -> str:
    if seconds < 1.5:
        return "about 1 s left"
    if seconds < 90:
        return f"about {seconds:.0f} s left"
    return f"about {seconds / 60:.0f} min left"


class _Eta:
    """Progress fraction and time left, from per-point cost estimates corrected as we go."""

    def __init__(self, costs: list[float]) -> None:
        self.costs = costs
        self.total = sum(costs) or 1.0
        self.start = time.monotonic()

    def fraction(self, index: int, within: float) -> float:
        return (sum(self.costs[:index]) + self.costs[index] * within) / self.total

    def left(self, fraction: float) -> float:
        elapsed = time.monotonic() - self.start
        if fraction > 0.05 and elapsed > 0.2:
            return elapsed / fraction * (1 - fraction)
        return self.total * (1 - fraction)


def _model_key(config: ExperimentConfig) -> tuple[tuple[str, str], ...]:
    """What decides a point's model: everything but the batch and the input."""
    model_fields = config.replace(batch=1, input_scale=1.0, input_distribution="normal").to_dict()
    return tuple((k, repr(v)) for k, v in sorted(model_fields.items()))


class _Models(contextlib.ExitStack):
    """Builds each point's model and input as a single run would; reuses the last model. Its
    `kept` layers stay kept in float32 until the next model or the end of the block (the first
    build refuses a pattern that names no layer, before anything is measured)."""

    def __init__(self) -> None:
        super().__init__()
        self.key: tuple[tuple[str, str], ...] | None = None
        self.model: torch.nn.Module | None = None
        self.rng: torch.Tensor | None = None
        self.kept: tuple[str, ...] = ()

    def get(self, config: ExperimentConfig) -> tuple[torch.nn.Module, torch.Tensor]:
        key = _model_key(config)
        if key != self.key or self.model is None or self.rng is None:
            self.close()  # the previous model's layers as built
            self.model = None  # let the previous model go before building the next
            self.model = build_model(config)
            self.rng = torch.get_rng_state()
            self.key = key
            self.kept = self.enter_context(keeping(self.model, config.keep_float32))
        torch.set_rng_state(self.rng)
        return self.model, build_input(config)


def _largest_rates(points: Sequence[SweepPoint]) -> tuple[float, float] | None:
    """float32 and autocast GFLOP/s of the point with the most work (the steadiest rates),
    among the points not too noisy to tell (None: none was)."""
    trusted = [p for p in points if not p.call.too_noisy]
    if not trusted:
        return None
    big = max(trusted, key=lambda p: p.flops)
    return big.gflops_plain, big.gflops_autocast


def run_spec(
    config: ExperimentConfig,
    spec: SweepSpec,
    progress: ProgressFn | None = None,
    cancel: CancelFn | None = None,
    on_point: PointFn | None = None,
    probe_onednn: bool = True,
    adaptive: bool = True,
    confirm: ConfirmFn | None = None,
) -> SweepResult:
    """Measure every point of `spec` around the base `config` (see `run_sweep`).

    The config's routes beyond eager (`sweep --routes`) are measured at every point after
    eager, each with the same budget (a compiled route compiles once per point: new shapes).
    A sweep forecast to take over ANNOUNCE_ABOVE_S is shown to `confirm` before its first
    point (False: Cancelled); its time left is told from the same forecast, routes included.
    """
    reporter = Reporter(progress, cancel)
    reporter.report(0.0, f"checking memory and time guards for {len(spec)} points")
    planned = spec.plan(config)
    estimates = check_points(planned)
    reporter.check()
    configs = [point.config for point in planned]
    ask_if_long(forecast_sweep(configs, estimates), confirm, reporter)
    costs = zip(configs, estimates, strict=True)
    eta = _Eta([point_seconds(c, e) + _POINT_OVERHEAD_S for c, e in costs])
    low = low_precision_dtype(config)
    points: list[SweepPoint] = []
    noisy: list[str] = []
    budget = SweepBudget(len(planned), config.min_time) if adaptive else None
    with torch_threads(config.threads) as threads, torch.no_grad():
        with _Models() as models:
            for k, plan in enumerate(planned):
                with (
                    guards.memory_outcome(plan.config, plan.name),
                    user_phase(config, f"sweep point {plan.name}"),
                ):
                    reporter.check()
                    report = _point_report(
                        reporter, eta, k, f"point {k + 1}/{len(planned)} · {plan.name}"
                    )
                    allowance = budget.next_point() if budget is not None else None
                    point, spent = _measure_point(
                        config, plan, models, low, report, cancel, allowance
                    )
                    if budget is not None:
                        budget.spend(spent)
                    points.append(point)
                    if point.plain.noisy or point.autocast.noisy or point.call.too_noisy:
                        noisy.append(plan.name)
                    if on_point is not None:
                        on_point(point)
        del models  # let the last point's model go before the probe builds its own
        probe = _probe_kernels(planned, low, reporter) if probe_onednn else None
    env = environment(threads)
    stalled = [planned[i].name for i in stalled_points(points, estimates)]
    verdict = _sweep_verdict(env, config, spec, points, probe, _caveat(points, stalled, noisy))
    roofline = build_roofline_from_work(
        config.dtype, threads, roofline_work(points), flops_formula=flops_formula(config)
    )
    reporter.report(1.0, "done")
    return SweepResult(
        schema_=SCHEMA,
        config=config,
        environment=env,
        param=spec.label,
        values=spec.values,
        width_values=spec.width_values or None,
        points=tuple(points),
        verdict=verdict,
        roofline=roofline,
        warnings=tuple(_warnings(points, stalled, noisy)),
        created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    )


def _point_report(reporter: Reporter, eta: _Eta, k: int, head: str) -> ProgressFn:
    """Progress for point `k`: its share of the bar, its own message and the time left."""

    def report(within: float, message: str) -> None:
        overall = _POINTS_SHARE * eta.fraction(k, within)
        left = _format_eta(eta.left(overall / _POINTS_SHARE))
        reporter.report(overall, f"{head} · {message} · {left}")

    return report


def _measure_point(
    config: ExperimentConfig,
    plan: PlannedPoint,
    models: _Models,
    low: torch.dtype,
    report: ProgressFn,
    cancel: CancelFn | None,
    allowance: PointAllowance | None,
) -> tuple[SweepPoint, float]:
    """One point timed plain vs autocast (then its routes); with the seconds its timing took,
    cold calls included. `allowance`: the adaptive sweep's share for it (None: fixed)."""
    report(0.0, "building")
    model, x = models.get(plan.config)
    plain_fn, auto_fn = forward_fns(model, x, low)
    started = _now()
    cold = [cold_call_ms(plain_fn)]
    try:
        cold.append(cold_call_ms(auto_fn))
    except Exception as exc:
        if is_out_of_memory(exc):
            raise
        raise AutocastFailed(
            "autocast",
            f"{plan.name}: the {config.dtype} autocast forward raised, so a sweep has "
            f"nothing to compare ({error_text(exc)}); `run` shows this finding",
        ) from None
    meter = LoadMeter()
    half = config.min_time / 2  # per mode; the protocol counts the cold calls in it
    paired = measure_paired(
        [plain_fn, auto_fn],
        half if allowance is None else half * ADAPTIVE_MIN_SHARE,
        Reporter(report, cancel),
        cold_ms=cold,
        labels=["float32", config.dtype],
        max_time=half if allowance is None else allowance.limit / 2,
        target=None if allowance is None else SWEEP_TARGET,
        budget=None if allowance is None else TargetBudget(allowance.cap / 2, allowance.fair / 2),
    )
    spent = _now() - started
    plain, auto = paired.stats
    evidence = TimingEvidence.from_timing(paired, meter.stop())
    routes = _point_routes(
        plan.config, model, x, low, plain_fn, auto_fn, report, cancel, models.kept
    )
    point = SweepPoint(
        index=plan.index,
        value=plan.value,
        value2=plan.value2,
        batch=plan.config.batch,
        widths=plan.config.widths if plan.config.model == "mlp" else (),
        latency=PointLatency.of(plain, auto, evidence),
        input=family(plan.config).record_input(plan.config, model, [x]),
        routes=routes,
        dtype=config.dtype,
        config=plan.config if plan.config.model != "mlp" else None,
    )
    return point, spent


def _now() -> float:
    """The timing protocol's clock (real time; the tester's kit scripts it with the blocks):
    a point's time is counted as the protocol counts its blocks'."""
    return timing.default_clock()


def _probe_kernels(
    planned: Sequence[PlannedPoint], low: torch.dtype, reporter: Reporter
) -> onednn.OneDnnProbe:
    """Which kernels oneDNN runs, asked at the middle point (a model of its own)."""
    reporter.check()
    reporter.report(_POINTS_SHARE, "asking oneDNN which kernels run")
    middle = planned[len(planned) // 2].config
    with user_phase(middle, "asking oneDNN which kernels run"), _Models() as models:
        model, x = models.get(middle)
        return onednn.probe(model, x, low)


def _warnings(points: Sequence[SweepPoint], stalled: list[str], noisy: list[str]) -> list[str]:
    """Why some points' times may not be representative: stalled by other programs, noisy."""
    warnings = []
    if stalled:
        warnings.append(
            f"{len(stalled)} of {len(points)} points ran over {STALL_FACTOR:.0f}× slower than "
            f"this CPU's calibrated rate predicts ({', '.join(stalled)}): another program is "
            "probably competing for the cores, so these times are not representative; retry "
            "on a quieter machine or with fewer threads (--threads 1)"
        )
    if noisy:
        warnings.append(
            f"{len(noisy)} of {len(points)} points had noisy timings (IQR ≥ 10% of the "
            f"median, or a speedup interval wider than {NOISY_WIDTH:g}×): {', '.join(noisy)}; "
            "close other programs or raise the measurement time"
        )
    return warnings


def _caveat(points: Sequence[SweepPoint], stalled: list[str], noisy: list[str]) -> str:
    """The verdict's caveat when half the points or more are doubtful, or when the factors
    it states are rough (a direction told on a busy machine), else ''."""
    doubtful = len(set(stalled) | set(noisy))
    if doubtful * 2 >= len(points):
        return (
            f"{doubtful} of {len(points)} points were noisy or slowed by other programs: "
            "provisional, see the warnings"
        )
    rough = [p.call.rough for p in points if p.call.rough]
    if rough:
        return f"the factors are rough at {len(rough)} of {len(points)} points ({rough[0]})"
    return ""


def _sweep_verdict(
    env: Environment,
    config: ExperimentConfig,
    spec: SweepSpec,
    points: Sequence[SweepPoint],
    probe: onednn.OneDnnProbe | None,
    caveat: str,
) -> HardwareVerdict:
    """The hardware verdict over the swept values (a grid: along its widest row)."""
    if spec.is_grid:
        # The verdict speaks about batch at the widest row, where autocast has most to gain.
        widest = spec.width_values[-1]
        row = [p for p in points if p.value2 == widest]
        return hardware_verdict(
            env,
            config.dtype,
            "batch",
            [p.value for p in row],
            told_speedups(row),
            probe,
            noisy=sum(not p.call.graded for p in row),
            context=f"at width {widest} (the widest row)",
            caveat=caveat,
            rates=_largest_rates(row),
        )
    return hardware_verdict(
        env,
        config.dtype,
        spec.param,
        spec.values,
        told_speedups(points),
        probe,
        noisy=sum(not p.call.graded for p in points),
        caveat=caveat,
        rates=_largest_rates(points),
    )

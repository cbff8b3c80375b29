"""Refuse configs that would exhaust memory or take too long, before allocating anything.

A single torch op cannot be interrupted, so the window's Cancel cannot rescue a forward pass
that takes minutes; these guards stop such a config up front, with a message saying why.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Iterator, Mapping, Sequence

import torch

# The compile forecast lives in compile_forecast; these names stay the guards' API.
from autocast_explorer.core.experiment.compile_forecast import (
    MAX_COMPILE_SECONDS as MAX_COMPILE_SECONDS,
)
from autocast_explorer.core.experiment.compile_forecast import (
    check_compile as check_compile,
)
from autocast_explorer.core.experiment.compile_forecast import (
    estimate_compile as estimate_compile,
)
from autocast_explorer.core.experiment.compile_forecast import (
    forecast_compile as forecast_compile,
)
from autocast_explorer.core.experiment.compile_forecast import (
    most_compile_s as most_compile_s,
)
from autocast_explorer.core.experiment.compile_forecast import (
    record_compile as record_compile,
)
from autocast_explorer.core.experiment.config import TRAINING_STEP_FORWARDS, ExperimentConfig
from autocast_explorer.core.experiment.families import family
from autocast_explorer.core.experiment.forward_estimate import ForwardEstimate as ForwardEstimate

# The quick bound lives in memory_bound (torch-free); these names stay the guards' API.
from autocast_explorer.core.experiment.memory_bound import (
    GuardError as GuardError,
)
from autocast_explorer.core.experiment.memory_bound import (
    check_memory_before_running as check_memory_before_running,
)
from autocast_explorer.core.experiment.memory_bound import (
    estimate_peak_bytes as estimate_peak_bytes,
)
from autocast_explorer.core.experiment.memory_bound import (
    estimate_training_peak_bytes as estimate_training_peak_bytes,
)
from autocast_explorer.core.experiment.memory_bound import (
    memory_budget_bytes as memory_budget_bytes,
)
from autocast_explorer.core.experiment.memory_bound import (
    parameter_copies,
    refuse_over_budget,
    task_bytes,
)
from autocast_explorer.core.experiment.op_rates import (
    ATEN_CALIBRATIONS,
    CALIBRATION_SECONDS,
    OpCalibration,
    OpWork,
    calls_given_up_after,
    fastest_call,
    power_of_two,
)
from autocast_explorer.core.experiment.out_of_memory import (
    OutOfMemory,
    is_out_of_memory,
    refused_bytes,
)
from autocast_explorer.core.experiment.route_kinds import route_kind
from autocast_explorer.core.experiment.shadow_run import shadow_run
from autocast_explorer.core.runtime.autocast import TORCH_DTYPES, autocast_context

MAX_FORWARD_SECONDS = 10.0
#: Calibrated sizes stop here: larger layers run at about the rate of this size on every CPU
#: kind measured, and a calibration must stay far below a second even where bf16 is slow.
_MAX_CLASS_BATCH = 256
_MAX_CLASS_FEATURES = 512
#: Past this many seconds of calibrating one forecast, the ops not yet timed take the rate their
#: kind reached at the sizes already timed: the guard answers in seconds, whatever the model.
CALIBRATION_BUDGET_S = 3.0
#: What a run's first calls take beside its tensors (oneDNN's kernels and caches, thread
#: stacks): the rise of a run of the default MLP, whose tensors take 2 MB, was 10–12 MB.
RUNTIME_BYTES = 12 * 2**20
#: What compiling a model takes beside it (inductor's graphs and generated code): a run of a
#: 3-layer MLP with the compiled route rose 107–113 MB.
COMPILE_BYTES = 112 * 2**20
#: A several-thread calibration stops calling after this many one-thread calls' time.
_GIVE_UP_FACTOR = 8
#: The rate of an op whose calibration raised in that dtype (oneDNN's bfloat16 LSTM on an AVX2
#: CPU: "could not create a primitive descriptor"): the run's forward raises there too, so its
#: mode is not timed (the engine measures float32 alone) and the forecast leaves it out.
CANNOT_RUN = 0.0


def traced_peak_bytes(config: ExperimentConfig) -> int:
    """The memory guard's estimate of the run's peak, from its forward traced at full size on
    fake tensors (shadow_run.py): every tensor alive at once inside the modules too (attention
    scores, a softmax's copy, autocast's casts), not only what modules return.

    Inference: the weights, the input, each mode's forward peak and the layer outputs the
    engine keeps. Training: the parameter copies the run holds (weights, gradients, optimizer
    states of both copies), the task, and each mode's training step (saved activations, then
    gradients). Both modes' peaks add up (ShadowRun.peak_bytes). Then the runtime's own
    memory on a run's first calls, and a compile's for a route that compiles.
    """
    traced = shadow_run(config)
    compiles = sum(
        COMPILE_BYTES for name in config.routes if (k := route_kind(name)) and k.compiles
    )
    own = RUNTIME_BYTES + compiles + traced.peak_bytes
    if config.mode == "train":
        return parameter_copies(config) * traced.parameter_bytes + task_bytes(config) + own
    return traced.parameter_bytes + traced.input_bytes + own


def _linear_class(shape: tuple[int, ...]) -> tuple[int, ...]:
    batch, fan_in, fan_out = shape
    return (
        power_of_two(batch, 1, _MAX_CLASS_BATCH),
        power_of_two(fan_in, 16, _MAX_CLASS_FEATURES),
        power_of_two(fan_out, 16, _MAX_CLASS_FEATURES),
    )


def _time_linear(shape: tuple[int, ...], dtype: torch.dtype | None) -> float:
    """Fastest seconds per call of an nn.Linear at `shape`, under autocast when `dtype`.

    The module, not torch.mm: the weight layout F.linear uses decides which kernel runs
    (on AVX2 CPUs, bfloat16 mm with a row-major right operand is a 10× slower reference kernel).
    """
    batch, fan_in, fan_out = shape
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        layer = torch.nn.Linear(fan_in, fan_out)
        x = torch.randn(batch, fan_in)

    def call() -> None:
        with torch.no_grad(), autocast_context(dtype):
            layer(x)

    return fastest_call(call)


#: Calibrations by op kind: nn.Linear's, and those of the aten ops a traced forward runs
#: (op_rates.py). A family with other ops adds its own.
CALIBRATIONS: dict[str, OpCalibration] = {
    "linear": OpCalibration(
        label="nn.Linear",
        size_class=_linear_class,
        flops=lambda s: 2 * s[0] * s[1] * s[2],
        time_call=_time_linear,
    ),
    **ATEN_CALIBRATIONS,
}


def work_items(config: ExperimentConfig) -> list[OpWork]:
    """The ops one forward of `config`'s model runs, as its family lists its matrix products
    (the MLP: one Linear per layer pair; a CNN's convolutions as implicit GEMMs, a
    transformer's projections and attention products, a recurrent layer's projections).

    Each is (m, k, n) with all its calls' FLOPs; a kind without a calibration of its own
    ("conv3x3", "bmm") is timed as a Linear of that shape.
    """
    return [OpWork(g.op, g.flops, (g.m, g.k, g.n)) for g in family(config).gemms(config)]


def forward_work(config: ExperimentConfig) -> tuple[dict[str, Sequence[OpWork]], str]:
    """Each mode's ops of one forward ('float32' and the config's dtype) and where they come
    from: the family's matrix products, or (a family that says so, a model without them, the
    user's own) every op of its forward traced at full size on fake tensors, in the dtype each
    computed in."""
    items = [] if family(config).forecast_from_trace(config) else work_items(config)
    if items:
        return {"float32": items, config.dtype: items}, ""
    traced = shadow_run(config)
    return dict(traced.work), f"every op of the forward {traced.basis}; "


@functools.cache
def calibrated_rate(kind: str, shape: tuple[int, ...], dtype_name: str, threads: int) -> float:
    """FLOP/s of one `kind` op at a size class in one mode ('float32' = no autocast), cached
    per (kind, size class, dtype, threads). The estimate reads it through this module, so a
    test of the guard's logic replaces it with a fixed rate (tests/steady_rate.py).

    Several threads are credited at least one thread's rate: while another program holds a
    core, every call that needs two cores at once waits up to a scheduler slice (~4-12 ms)
    for the second, however small the op. That wait is a delay per call, not a rate: read as
    one, 30 µs ops timed at 8-12 ms made a 10 ms transformer forward "12 s" and refused it.
    One thread never waits for another, so its fastest call is one a busy machine lets through;
    it is timed first, and the several-thread timing is cut short once its calls have taken
    far longer than one thread's (its answer could no longer change the rate).
    """
    if threads <= 1:
        return _timed_rate(kind, shape, dtype_name, threads)
    one = calibrated_rate(kind, shape, dtype_name, 1)
    if one == CANNOT_RUN:
        return CANNOT_RUN
    one_call_s = CALIBRATIONS[kind].flops(shape) / one
    with calls_given_up_after(max(_GIVE_UP_FACTOR * one_call_s, CALIBRATION_SECONDS)):
        return max(_timed_rate(kind, shape, dtype_name, threads), one)


def _timed_rate(kind: str, shape: tuple[int, ...], dtype_name: str, threads: int) -> float:
    """FLOP/s of the fastest timed call of `kind` at `shape` with `threads` threads; CANNOT_RUN
    when the op raises (torch's words for a missing kernel: RuntimeError, NotImplementedError)."""
    calibration = CALIBRATIONS[kind]
    dtype = None if dtype_name == "float32" else TORCH_DTYPES[dtype_name]
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return calibration.flops(shape) / calibration.time_call(shape, dtype)
    except (RuntimeError, NotImplementedError) as exc:
        if is_out_of_memory(exc):
            raise
        return CANNOT_RUN
    finally:
        torch.set_num_threads(previous)


def _shape_text(shape: tuple[int, ...]) -> str:
    return "×".join(map(str, shape[:-1])) + f"→{shape[-1]}" if len(shape) > 1 else str(shape)


#: One calibration: (op kind, size class, the dtype it computes in).
_Class = tuple[str, tuple[int, ...], str]


class _Rates:
    """The rates one estimate asks for: calibrated (through `calibrated_rate`) until the
    budget is spent, then borrowed from what its kind reached already in its dtype. A kind
    not timed yet is timed, even then: another kind's rate says nothing of it (a bfloat16
    convolution's backward ran 20× its forward's rate under the AVX2 switches)."""

    def __init__(self, threads: int, budget_s: float) -> None:
        self.threads = threads
        self.deadline = time.monotonic() + budget_s
        self.timed: dict[_Class, float] = {}
        self.borrowed = 0

    def rate(self, key: _Class) -> float:
        if key not in self.timed:
            ran = {c: r for c, r in self.timed.items() if r != CANNOT_RUN}
            similar = [r for (k, _s, d), r in ran.items() if (k, d) == (key[0], key[2])]
            if time.monotonic() > self.deadline and similar and key[0] != "call":
                self.borrowed += 1
                return min(similar)
            self.timed[key] = calibrated_rate(key[0], key[1], key[2], self.threads)
        return self.timed[key]


def estimate_modes(
    work: Mapping[str, Sequence[OpWork]],
    threads: int,
    stop_above: float | None = None,
    budget_s: float = CALIBRATION_BUDGET_S,
) -> ForwardEstimate:
    """Seconds of one forward in the slower mode: each op's work ÷ the rate its kind reached
    at its size class in the dtype it computes in (its own, else its mode's; 'float32' is no
    autocast). Unknown kinds use the linear calibration.

    The biggest shares are timed first; once a mode's ops timed so far pass `stop_above`, the
    rest is not timed (the forward is refused whatever they add: the estimate is a floor), and
    past `budget_s` of calibrating the rest take the slowest rate their kind reached already.
    A mode with an op that cannot run in its dtype here (CANNOT_RUN) raises in the run: it is
    not the slower mode unless every mode raises (`raises_in` names it).
    """
    shares: dict[tuple[str, _Class], int] = {}
    labels: dict[str, list[str]] = {}
    for mode, items in work.items():
        for item in items:
            kind = item.kind if item.kind in CALIBRATIONS else "linear"
            calibration = CALIBRATIONS[kind]
            size = calibration.size_class(item.shape)
            entry = (mode, (kind, size, item.dtype or mode))
            shares[entry] = shares.get(entry, 0) + item.flops
            shapes = labels.setdefault(calibration.label, [])
            if _shape_text(size) not in shapes and kind not in ("bytes", "call"):
                shapes.append(_shape_text(size))
    totals = dict.fromkeys(work, 0.0)
    rates = _Rates(threads, budget_s)
    stopped = False
    raised: dict[str, str] = {}  # mode → the op that cannot run in it
    for (mode, calibration_class), flops in sorted(shares.items(), key=lambda e: -e[1]):
        if mode in raised:
            continue
        rate = rates.rate(calibration_class)
        if rate == CANNOT_RUN:
            raised[mode] = CALIBRATIONS[calibration_class[0]].label
            continue
        totals[mode] += flops / rate
        if stop_above is not None and totals[mode] > stop_above:
            stopped = True
            break
    running = [mode for mode in totals if mode not in raised] or list(totals)
    slower = max(running, key=lambda mode: totals[mode])
    basis = _basis(labels, work, threads, slower, stopped, rates.borrowed)
    for mode, label in raised.items():
        basis += f"; {label} raises in {mode} here: that forward is not timed"
    raises_in = next((mode for mode in raised if mode != slower), "")
    return ForwardEstimate.of_seconds(totals[slower], basis, stopped, raises_in, totals)


def _basis(
    labels: Mapping[str, list[str]],
    work: Mapping[str, Sequence[OpWork]],
    threads: int,
    slower: str,
    stopped: bool,
    borrowed: int,
) -> str:
    """'nn.Linear at 256×512→512 timed in float32 and under bfloat16 autocast, 2 threads; …'"""

    def shapes_text(shapes: list[str]) -> str:
        if not shapes:
            return ""
        return f" at {', '.join(shapes)}" if len(shapes) <= 3 else f" at {len(shapes)} sizes"

    ops = "; ".join(f"{label}{shapes_text(shapes)}" for label, shapes in labels.items())
    lower = next((mode for mode in work if mode != "float32"), "float32")
    text = (
        f"{ops} timed in float32 and under {lower} autocast, {threads} thread"
        f"{'s' if threads != 1 else ''}; slower mode {slower}"
    )
    if borrowed:
        text += f"; {borrowed} sizes not timed (calibration time spent) took their kind's rate"
    if stopped:
        text += "; timing stopped once the ops timed so far passed the limit"
    return text


def estimate_work(items: Sequence[OpWork], dtype: str, threads: int) -> ForwardEstimate:
    """Seconds for `items` in the slower of float32 and `dtype` autocast (estimate_modes)."""
    return estimate_modes({"float32": items, dtype: items}, threads)


def estimate_forward(config: ExperimentConfig, stop_above: float | None = None) -> ForwardEstimate:
    """One forward of `config`, calibrated on its own ops (estimate_modes): the family's
    matrix products, or every op traced on fake tensors (forward_work). Nothing runs at full
    size; timing stops once the forward is surely over `stop_above` seconds.

    A training config forecast from its trace also gets each mode's step from the traced
    step's ops (its backward's own kernels: a CNN's step took 1.1–1.9 forwards, not the 3
    its FLOPs say, as bfloat16's backward skips the forward's slow path on AVX2 CPUs)."""
    threads = config.threads or torch.get_num_threads()
    work, source = forward_work(config)
    started = time.monotonic()
    estimate = estimate_modes(work, threads, stop_above)
    if not source:
        return estimate
    estimate = estimate.model_copy(update={"basis": source + estimate.basis})
    steps = shadow_run(config).step_work if config.mode == "train" else {}
    if not steps or estimate.at_least:
        return estimate
    limit = None if stop_above is None else stop_above * TRAINING_STEP_FORWARDS
    left = max(0.0, CALIBRATION_BUDGET_S - (time.monotonic() - started))
    return estimate.with_steps(estimate_modes(steps, threads, limit, left))


def estimate_forward_seconds(config: ExperimentConfig) -> float:
    return estimate_forward(config).seconds


def check_memory(config: ExperimentConfig) -> int:
    """Raise GuardError when the estimated peak (traced_peak_bytes) exceeds the memory
    budget; returns the peak."""
    peak = traced_peak_bytes(config)
    refuse_over_budget(config, peak)
    _MEMORY_ESTIMATES.pop(config, None)
    _MEMORY_ESTIMATES[config] = peak
    while len(_MEMORY_ESTIMATES) > _ESTIMATES_KEPT:
        del _MEMORY_ESTIMATES[next(iter(_MEMORY_ESTIMATES))]
    return peak


#: The memory guard's estimates made in this process, newest last (what an out-of-memory
#: message names).
_MEMORY_ESTIMATES: dict[ExperimentConfig, int] = {}
_ESTIMATES_KEPT = 64


def time_limit_s(config: ExperimentConfig) -> float | None:
    """Seconds one forward may take (None: slow runs allowed): MAX_FORWARD_SECONDS, or its
    share of one training step (≈ TRAINING_STEP_FORWARDS forwards)."""
    if config.allow_slow:
        return None
    return MAX_FORWARD_SECONDS / (TRAINING_STEP_FORWARDS if config.mode == "train" else 1)


def check_time(config: ExperimentConfig, estimate: ForwardEstimate | None = None) -> float:
    """Raise GuardError when one forward (in training: one training step, from its traced ops
    or ≈ 3 forwards) is estimated to take over 10 s (unless allowed): nothing can interrupt it
    once started.

    `estimate` is the forward's estimate when the caller already has it (else it is made,
    its timing stopped as soon as the forward is surely over the limit)."""
    if estimate is None:
        estimate = estimate_forward(config, time_limit_s(config))
    seconds = estimate.seconds
    what = "one forward pass"
    if config.mode == "train":
        seconds = estimate.step_seconds()
        what = "one training step" + (
            "" if estimate.steps_traced else f" (≈ {TRAINING_STEP_FORWARDS} forwards)"
        )
    if seconds > MAX_FORWARD_SECONDS and not config.allow_slow:
        over = "over " if estimate.at_least else ""
        raise GuardError(
            "time",
            f"{what} is estimated at {over}{seconds:,.1f} s "
            f"(limit {MAX_FORWARD_SECONDS:.0f} s); use a smaller model or batch, "
            "or allow slow runs (--allow-slow)",
        )
    return seconds


def check(config: ExperimentConfig) -> float:
    """Both guards, memory first (it times nothing); returns the forward estimate (s)."""
    check_memory(config)
    return check_time(config)


def check_estimate(config: ExperimentConfig) -> ForwardEstimate:
    """Both guards, memory first; returns the forward estimate with its basis and the memory
    estimate (for results)."""
    peak = check_memory(config)
    estimate = estimate_forward(config, time_limit_s(config))
    check_time(config, estimate)
    return estimate.model_copy(update={"memory_estimate_mb": peak / 2**20})


# ---- when memory ran out anyway ----------------------------------------------------------
def out_of_memory(config: ExperimentConfig, exc: BaseException, where: str = "") -> OutOfMemory:
    """The OutOfMemory for `exc`, its message naming the guard's estimate and budget (and
    `where`, e.g. a sweep's point)."""
    if isinstance(exc, OutOfMemory):
        return exc
    estimate = _known_peak(config)
    budget = memory_budget_bytes(config)
    refused = refused_bytes(exc)
    asked = f"the allocator refused {_mb(refused)}" if refused else "memory ran out"
    at = f" at {where}" if where else ""
    guessed = (
        f"the memory guard estimated a peak of {_mb(estimate)}"
        if estimate is not None
        else "the memory guard had no estimate (building or probing the model at batch 1 ran out)"
    )
    message = (
        f"out of memory{at}: {asked}; {guessed} against a budget of {_mb(budget)} (the process "
        "may be limited below that, e.g. ulimit -v); use smaller sizes or batch"
    )
    return OutOfMemory(message, refused, estimate or 0, budget)


def _known_peak(config: ExperimentConfig) -> int | None:
    """The guard's peak estimate when it needs nothing run: the one the guard made, else the
    quick bound; a user model whose batch-1 probe is what ran out is not probed again (it
    would run out again, inside this handler)."""
    if config in _MEMORY_ESTIMATES:
        return _MEMORY_ESTIMATES[config]
    if not family(config).sizes_known(config):
        return None
    training = config.mode == "train"
    return (estimate_training_peak_bytes if training else estimate_peak_bytes)(config)


def _mb(count: int) -> str:
    return f"{count / 2**20:,.0f} MB" if count >= 2**20 else f"{count / 2**20:,.2f} MB"


@contextlib.contextmanager
def memory_outcome(config: ExperimentConfig, where: str = "") -> Iterator[None]:
    """Turn running out of memory inside the block into OutOfMemory (other errors pass)."""
    try:
        yield
    except (MemoryError, RuntimeError) as exc:
        if not is_out_of_memory(exc):
            raise
        raise out_of_memory(config, exc, where) from None

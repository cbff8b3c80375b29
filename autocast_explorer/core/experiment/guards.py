"""Refuse configs that would exhaust memory or take too long, before allocating anything.

A single torch op cannot be interrupted, so the window's Cancel cannot rescue a forward pass
that takes minutes; these guards stop such a config up front, with a message saying why.
"""

from __future__ import annotations

import contextlib
import functools
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

import torch
from pydantic import Field

from autocast_explorer.core.documents.field_types import NonNegative, Text
from autocast_explorer.core.documents.model import Part, dump
from autocast_explorer.core.experiment.config import TRAINING_STEP_FORWARDS, ExperimentConfig
from autocast_explorer.core.experiment.families import family
from autocast_explorer.core.experiment.out_of_memory import (
    OutOfMemory,
    is_out_of_memory,
    refused_bytes,
)
from autocast_explorer.core.experiment.training import HELD_OUT_BATCHES, TRAIN_POOL_BATCHES
from autocast_explorer.core.hardware.cpu import available_memory_bytes
from autocast_explorer.core.runtime.autocast import TORCH_DTYPES, autocast_context
from autocast_explorer.core.runtime.errors import ConfigError

MAX_FORWARD_SECONDS = 10.0
#: A compile cannot be interrupted either; past this forecast the compiled route is refused.
MAX_COMPILE_SECONDS = 120.0
#: Seconds per leaf module of the fastest compile in this process (the forecast's basis).
_COMPILE_RATE: list[float] = []
#: Float32 copies of the parameters a training run holds at once: the initial model, two probe
#: gradients, and per trained copy its weights, gradients and up to two optimizer states (AdamW).
_TRAINING_PARAMETER_COPIES = {"sgd": 1 + 2 + 2 * 3, "adamw": 1 + 2 + 2 * 4}
#: Calibrated sizes stop here: larger layers run at about the rate of this size on every CPU
#: kind measured, and a calibration must stay far below a second even where bf16 is slow.
_MAX_CLASS_BATCH = 256
_MAX_CLASS_FEATURES = 512
#: A calibration times calls for this long (at least this many) and keeps the fastest. With
#: several threads it runs twice, once on one thread (calibrated_rate): 2 × 2.5 ms, as 5 ms was.
_CALIBRATION_CALLS = 3
_CALIBRATION_SECONDS = 0.0025


class GuardError(ConfigError):
    """A config is valid but too big for this machine (memory) or too slow (time)."""


def estimate_peak_bytes(config: ExperimentConfig) -> int:
    """fp32 weights + one low-precision copy + input and every layer's output, in both modes.

    The family counts its parameters and activations (a CNN's feature maps, a transformer's
    attention scores, a recurrent layer's gates at every step).
    """
    low_bytes = TORCH_DTYPES[config.dtype].itemsize
    fam = family(config)
    params = fam.parameter_count(config)
    activations = fam.activation_elements(config)
    return params * (4 + low_bytes) + activations * (4 + low_bytes) * 2


@dataclass(frozen=True)
class OpWork:
    """One op of a forward pass, as the time estimate sees it.

    `kind` picks the calibration ("linear"; other model families register theirs in
    CALIBRATIONS), `shape` is what that calibration understands (linear: batch, in, out).
    """

    kind: str
    flops: int
    shape: tuple[int, ...]


@dataclass(frozen=True)
class OpCalibration:
    """How to time one op kind at a representative size: the estimate's plug-in point.

    `size_class` maps a real shape to the (smaller, rounded) shape that is timed, so configs
    share calibrations and calibrating stays cheap; `time_call(shape, dtype)` returns seconds
    per call, with `dtype` None meaning float32 outside autocast; `label` names the op.
    """

    label: str
    size_class: Callable[[tuple[int, ...]], tuple[int, ...]]
    flops: Callable[[tuple[int, ...]], int]
    time_call: Callable[[tuple[int, ...], torch.dtype | None], float]


class ForwardEstimate(Part):
    """The result's `guard`: the time guard's estimate, beside the measurement."""

    # The time guard's forecast of one forward (the slower mode) and what it rests on.
    schema_name: ClassVar[str] = "guard"

    estimated_forward_ms: Annotated[
        NonNegative, Field(description="the time guard's forecast of one forward")
    ]
    basis: Annotated[Text, Field(description="what was calibrated to make it")]

    @classmethod
    def of_seconds(cls, seconds: float, basis: str) -> ForwardEstimate:
        return cls(estimated_forward_ms=seconds * 1e3, basis=basis)

    @property
    def seconds(self) -> float:
        return self.estimated_forward_ms / 1e3

    def to_dict(self) -> dict[str, Any]:
        return dump(self)


def _power_of_two(value: int, low: int, high: int) -> int:
    """The power of two nearest `value` (geometrically), clamped to [low, high]."""
    if value <= low:
        return low
    return max(low, min(high, int(2 ** round(math.log2(value)))))


def _linear_class(shape: tuple[int, ...]) -> tuple[int, ...]:
    batch, fan_in, fan_out = shape
    return (
        _power_of_two(batch, 1, _MAX_CLASS_BATCH),
        _power_of_two(fan_in, 16, _MAX_CLASS_FEATURES),
        _power_of_two(fan_out, 16, _MAX_CLASS_FEATURES),
    )


def _time_linear(shape: tuple[int, ...], dtype: torch.dtype | None) -> float:
    """Fastest seconds per call of an nn.Linear at `shape`, under autocast when `dtype`.

    The module, not torch.mm: the weight layout F.linear uses decides which kernel runs
    (on AVX2 CPUs, bfloat16 mm with a row-major right operand is a 10× slower reference kernel).
    The fastest call, not the median: another program stalling a few calls must not leave a
    10–100× too slow rate in the cache for the rest of the session (and refuse good configs).
    """
    batch, fan_in, fan_out = shape
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        layer = torch.nn.Linear(fan_in, fan_out)
        x = torch.randn(batch, fan_in)

    def call() -> float:
        with torch.no_grad(), autocast_context(dtype):
            start = time.perf_counter()
            layer(x)
            return time.perf_counter() - start

    call()  # cold: kernel selection, allocation
    times = [call()]
    spent = times[0]
    while len(times) < _CALIBRATION_CALLS or (spent < _CALIBRATION_SECONDS and len(times) < 200):
        times.append(call())
        spent += times[-1]
    return max(min(times), 1e-9)


#: Calibrations by op kind. Model families with other ops (conv2d, lstm, attention) add theirs.
CALIBRATIONS: dict[str, OpCalibration] = {
    "linear": OpCalibration(
        label="nn.Linear",
        size_class=_linear_class,
        flops=lambda s: 2 * s[0] * s[1] * s[2],
        time_call=_time_linear,
    ),
}


def work_items(config: ExperimentConfig) -> list[OpWork]:
    """The ops one forward of `config`'s model runs, as its family lists its matrix products
    (the MLP: one Linear per layer pair; a CNN's convolutions as implicit GEMMs, a
    transformer's projections and attention products, a recurrent layer's projections).

    Each is (m, k, n) with all its calls' FLOPs; a kind without a calibration of its own
    ("conv3x3", "bmm") is timed as a Linear of that shape.
    """
    return [OpWork(g.op, g.flops, (g.m, g.k, g.n)) for g in family(config).gemms(config)]


@functools.cache
def calibrated_rate(kind: str, shape: tuple[int, ...], dtype_name: str, threads: int) -> float:
    """FLOP/s of one `kind` op at a size class in one mode ('float32' = no autocast), cached
    per (kind, size class, dtype, threads). The estimate reads it through this module, so a
    test of the guard's logic replaces it with a fixed rate (tests/steady_rate.py).

    Several threads are credited at least one thread's rate: while another program holds a
    core, every call that needs two cores at once waits up to a scheduler slice (~4-12 ms)
    for the second, however small the op. That wait is a delay per call, not a rate: read as
    one, 30 µs ops timed at 8-12 ms made a 10 ms transformer forward "12 s" and refused it.
    One thread never waits for another, so its fastest call is one a busy machine lets through.
    """
    rate = _timed_rate(kind, shape, dtype_name, threads)
    return max(rate, calibrated_rate(kind, shape, dtype_name, 1)) if threads > 1 else rate


def _timed_rate(kind: str, shape: tuple[int, ...], dtype_name: str, threads: int) -> float:
    """FLOP/s of the fastest timed call of `kind` at `shape` with `threads` threads."""
    calibration = CALIBRATIONS[kind]
    dtype = None if dtype_name == "float32" else TORCH_DTYPES[dtype_name]
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return calibration.flops(shape) / calibration.time_call(shape, dtype)
    finally:
        torch.set_num_threads(previous)


def estimate_training_peak_bytes(config: ExperimentConfig) -> int:
    """Parameter copies, activations saved for backward and their gradients, and the task."""
    low_bytes = TORCH_DTYPES[config.dtype].itemsize
    fam = family(config)
    params = fam.parameter_count(config)
    copies = _TRAINING_PARAMETER_COPIES.get(
        config.optimizer, max(_TRAINING_PARAMETER_COPIES.values())
    )
    activations = fam.activation_elements(config)
    # The task: every batch's input, plus one label per row.
    task = (TRAIN_POOL_BATCHES + HELD_OUT_BATCHES) * (fam.input_elements(config) + config.batch) * 4
    return params * (4 * copies + low_bytes) + activations * (4 + low_bytes) * 4 + task


def _shape_text(shape: tuple[int, ...]) -> str:
    return "×".join(map(str, shape[:-1])) + f"→{shape[-1]}" if len(shape) > 1 else str(shape)


def estimate_work(items: Sequence[OpWork], dtype: str, threads: int) -> ForwardEstimate:
    """Seconds for `items` in the slower of float32 and `dtype` autocast, each op at the rate
    its own kind reached at its size class; unknown kinds use the linear calibration."""
    totals = {"float32": 0.0, dtype: 0.0}
    timed: dict[str, list[str]] = {}
    for item in items:
        kind = item.kind if item.kind in CALIBRATIONS else "linear"
        calibration = CALIBRATIONS[kind]
        size = calibration.size_class(item.shape)
        for mode in totals:
            totals[mode] += item.flops / calibrated_rate(kind, size, mode, threads)
        shapes = timed.setdefault(calibration.label, [])
        if _shape_text(size) not in shapes:
            shapes.append(_shape_text(size))
    slower = max(totals, key=lambda mode: totals[mode])
    ops = "; ".join(f"{label} at {', '.join(shapes)}" for label, shapes in timed.items())
    basis = (
        f"{ops} timed in float32 and under {dtype} autocast, {threads} thread"
        f"{'s' if threads != 1 else ''}; slower mode {slower}"
    )
    return ForwardEstimate.of_seconds(totals[slower], basis)


def estimate_forward(config: ExperimentConfig) -> ForwardEstimate:
    """One forward of `config`, calibrated on its own layers' ops (see estimate_work); a user
    model's from its own timed forwards (families/user/probe.py)."""
    measured = getattr(family(config), "measured_forward", None)
    if measured is not None:
        return ForwardEstimate.of_seconds(*measured(config))
    threads = config.threads or torch.get_num_threads()
    return estimate_work(work_items(config), config.dtype, threads)


def estimate_forward_seconds(config: ExperimentConfig) -> float:
    return estimate_forward(config).seconds


def memory_budget_bytes(config: ExperimentConfig) -> int:
    """The configured budget, or half of the RAM available right now."""
    if config.memory_budget_mb is not None:
        return int(config.memory_budget_mb * 2**20)
    return available_memory_bytes() // 2


def check_memory(config: ExperimentConfig) -> int:
    """Raise GuardError when the estimated peak exceeds the memory budget; returns the peak."""
    budget = memory_budget_bytes(config)
    peak = (
        estimate_training_peak_bytes(config)
        if config.mode == "train"
        else estimate_peak_bytes(config)
    )
    if peak > budget:
        raise GuardError(
            "memory",
            f"this model needs about {peak / 2**20:,.0f} MB but the budget is "
            f"{budget / 2**20:,.0f} MB; use a smaller model or batch",
        )
    return peak


def check_memory_before_running(config: ExperimentConfig) -> int | None:
    """The memory guard where it is arithmetic, for input validation on the GUI thread: a
    user model's size is measured by running its code, which the run's own guards do on the
    worker after the trust question, so here it is skipped (None)."""
    return None if config.is_user_model else check_memory(config)


def check_time(config: ExperimentConfig, estimate: ForwardEstimate | None = None) -> float:
    """Raise GuardError when one forward (in training: one training step, ≈ 3 forwards) is
    estimated to take over 10 s (unless allowed): nothing can interrupt it once started.

    `estimate` is the forward's estimate when the caller already has it (else it is made)."""
    seconds = (estimate if estimate is not None else estimate_forward(config)).seconds
    what = "one forward pass"
    if config.mode == "train":
        seconds *= TRAINING_STEP_FORWARDS
        what = f"one training step (≈ {TRAINING_STEP_FORWARDS} forwards)"
    if seconds > MAX_FORWARD_SECONDS and not config.allow_slow:
        raise GuardError(
            "time",
            f"{what} is estimated at {seconds:,.1f} s "
            f"(limit {MAX_FORWARD_SECONDS:.0f} s); use a smaller model or batch, "
            "or allow slow runs (--allow-slow)",
        )
    return seconds


def check(config: ExperimentConfig) -> float:
    """Both guards, memory first (it needs no calibration); returns the forward estimate (s)."""
    check_memory(config)
    return check_time(config)


def check_estimate(config: ExperimentConfig) -> ForwardEstimate:
    """Both guards, memory first; returns the forward estimate with its basis (for results)."""
    check_memory(config)
    estimate = estimate_forward(config)
    check_time(config, estimate)
    return estimate


def leaf_modules(model: torch.nn.Module) -> int:
    """Modules without children: what a compiled graph grows with (at least 1)."""
    return max(1, sum(1 for m in model.modules() if not any(True for _ in m.children())))


def record_compile(seconds: float, leaves: int) -> None:
    """Remember this compile's rate; the fastest one is kept (the first compile of a process
    also imports inductor, and a stalled one must not refuse later models)."""
    rate = seconds / max(leaves, 1)
    _COMPILE_RATE[:] = [min([rate, *_COMPILE_RATE])]


def estimate_compile(leaves: int) -> float | None:
    """Forecast seconds to compile a model of `leaves` leaf modules (both precisions), from
    this process's fastest compile; None before anything was compiled."""
    return _COMPILE_RATE[0] * leaves if _COMPILE_RATE else None


def check_compile(leaves: int, allow_slow: bool = False) -> float | None:
    """Raise GuardError when the compile forecast exceeds MAX_COMPILE_SECONDS (unless
    allowed); returns the forecast (None: no compile measured yet in this process)."""
    seconds = estimate_compile(leaves)
    if seconds is not None and seconds > MAX_COMPILE_SECONDS and not allow_slow:
        raise GuardError(
            "time",
            f"compiling is estimated at {seconds:,.0f} s (limit {MAX_COMPILE_SECONDS:.0f} s, "
            f"{leaves} modules at this session's fastest compile rate); allow slow runs "
            "(--allow-slow) to compile anyway",
        )
    return seconds


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
    """The guard's peak estimate when it needs nothing run: a user model whose batch-1 probe
    is what ran out is not probed again (it would run out again, inside this handler)."""
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

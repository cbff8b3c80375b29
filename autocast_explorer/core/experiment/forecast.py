"""How long a run will take, said before it starts.

From the time guard's forecast of one forward (nothing is run at full size: guards.py) and
what a run does with forwards, in the engine's order of work: its untimed forwards (cold,
recorded, traced), the paired timing of each mode (at least `min_time`, or a few calls of a
slow forward; at most its time limit), each extra route's timing and compile, a training
run's steps of both copies, a sweep's every point and route. `forecast(config)` is the one
function other code asks (a precision plan's search weighs configs by it); the engine, the
sweep runner, the command line and the window show what it says before a long run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from autocast_explorer.core.experiment import guards
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.memory_bound import HELD_OUT_BATCHES
from autocast_explorer.core.experiment.op_rates import OpWork
from autocast_explorer.core.experiment.route_kinds import route_kind
from autocast_explorer.core.experiment.shadow_run import shadow_run
from autocast_explorer.core.runtime.progress import Cancelled, Reporter

#: A run forecast to take longer than this is announced before it starts: on stderr by the
#: command line, and the window asks whether to run it.
ANNOUNCE_ABOVE_S = 20.0
#: Forwards of an inference run outside its timing: a cold call and a recorded forward per
#: mode, then the op trace's three (float32, autocast under no_grad and inference_mode).
_COLD_AND_RECORDED = 4
_TRACED = 3
#: What the op trace adds per op it records (numerics/optrace.py: each op passes through
#: Python): about 1 ms on a busy 2-core EPYC, traced U-Net forwards of 87 and 357 ops.
TRACED_OP_SECONDS = 5e-4
#: Calls a mode's timing makes at least, however slow (its cold call and warm-ups kept).
_LEAST_TIMED_CALLS = 4
#: Forwards of a sweep point outside its timing budget (a cold call and warm-ups per mode).
SWEEP_POINT_FORWARDS = 8
#: A training run's probed steps (one per mode, each traced: about two steps' time).
_PROBED_STEPS = 4


@dataclass(frozen=True)
class Forecast:
    """A run's forecast: its likely seconds, at most (timing goes on to its limit while the
    speedup is uncertain), what they are made of, and the memory guard's estimate."""

    seconds: float
    at_most_s: float
    parts: tuple[tuple[str, float], ...]
    forward_s: float
    memory_bytes: int | None = None

    @property
    def worth_announcing(self) -> bool:
        """Whether it is said before the run starts (over ANNOUNCE_ABOVE_S)."""
        return self.seconds > ANNOUNCE_ABOVE_S

    def text(self) -> str:
        """The command line's line: 'forecast: about 3 min (up to 9 min): timing 2 min,
        compiling 1 min; one forward 1.2 s; about 750 MB of memory'."""
        return f"forecast: {self._said()}"

    def sentence(self) -> str:
        """The window's: 'This run is forecast to take about 3 min (…): …; about 750 MB of …'."""
        return f"This run is forecast to take {self._said()}."

    def _said(self) -> str:
        at_most = (
            f" (up to {duration_text(self.at_most_s)})"
            if self.at_most_s > self.seconds * 1.2
            else ""
        )
        parts = ", ".join(f"{what} {duration_text(s)}" for what, s in self.parts if s >= 0.5)
        memory = (
            f"; about {self.memory_bytes / 2**20:,.0f} MB of memory"
            if self.memory_bytes is not None
            else ""
        )
        return (
            f"about {duration_text(self.seconds)}{at_most}"
            f"{': ' + parts if parts else ''}; one forward {duration_text(self.forward_s)}"
            f"{memory}"
        )


def duration_text(seconds: float) -> str:
    """'0.2 s', '45 s', '3 min', '1 h 5 min'."""
    if seconds < 10:
        return f"{seconds:.1f} s" if seconds >= 0.05 else f"{seconds * 1e3:.0f} ms"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def timed_seconds(config: ExperimentConfig, call_s: float, min_time: float) -> tuple[float, float]:
    """Both modes' paired timing of calls of `call_s` each: likely (`min_time` per mode, or
    the calls a slow forward needs) and at most (the config's time limit per mode)."""
    return _timed_modes(config, (call_s, call_s), min_time)


def _timed_modes(
    config: ExperimentConfig, calls_s: Sequence[float], min_time: float
) -> tuple[float, float]:
    """timed_seconds with each mode's own call: a bfloat16 forward 16× float32's (a
    convolution's slow path on AVX2 CPUs) needs its calls; float32 only its `min_time`."""
    likely = [max(min_time, _LEAST_TIMED_CALLS * call_s) for call_s in calls_s]
    return sum(likely), sum(max(config.time_limit, each) for each in likely)


def _routes(
    config: ExperimentConfig, forward_s: float, min_time: float
) -> list[tuple[str, float, float]]:
    """Each extra route's (what, likely, at most): its timing, and a compile for one that
    compiles (compile_forecast.py: likely, and at most a cold compile)."""
    out = []
    for name in config.routes[1:]:
        likely, _at_most = timed_seconds(config, forward_s, min_time)
        out.append((f"the {name} route", likely, likely))
        kind = route_kind(name)
        if kind is not None and kind.compiles:
            leaves = shadow_run(config).leaf_modules
            likely_s, most_s = guards.forecast_compile(leaves), guards.most_compile_s(leaves)
            out.append((f"compiling ({name})", likely_s, most_s))
    return out


def traced_calls(work: Sequence[OpWork]) -> int:
    """The ops a traced forward dispatched (its "call" work)."""
    return sum(w.flops for w in work if w.kind == "call")


def _inference_parts(
    config: ExperimentConfig, forward: guards.ForwardEstimate
) -> list[tuple[str, float, float]]:
    """Timing, the untimed forwards, the comparison of every layer's outputs (as many
    elements as the float32 forward's layers return, compared at a calibrated rate), the op
    trace's forwards and its cost per op, and the extra routes; each mode's forwards at its
    own forecast. When the autocast forward raises here (an op of it cannot run in its dtype),
    the engine times float32 alone on its budget, after its cold and recorded forwards, and
    traces no ops."""
    plain, low = forward.mode_seconds("float32"), forward.mode_seconds(config.dtype)
    if forward.raises_in == config.dtype:
        alone = max(config.min_time, _LEAST_TIMED_CALLS * plain)
        untimed = _COLD_AND_RECORDED / 2 * plain
        return [
            ("timing float32 (the autocast forward raises)", alone, alone),
            ("cold and recorded forwards", untimed, untimed),
            *_routes(config, forward.seconds, config.min_time),
        ]
    likely, at_most = _timed_modes(config, (plain, low), config.min_time)
    traced = shadow_run(config)
    threads = config.threads or torch.get_num_threads()
    compared = traced.kept.get("float32", 0) // 4
    comparing = compared / guards.calibrated_rate("layer_error", (), config.dtype, threads)
    calls = {
        mode: sum(w.flops for w in work if w.kind == "call") for mode, work in traced.work.items()
    }
    traced_ops = calls.get("float32", 0) + (_TRACED - 1) * calls.get(config.dtype, 0)
    tracing = plain + (_TRACED - 1) * low + traced_ops * TRACED_OP_SECONDS
    untimed = _COLD_AND_RECORDED / 2 * (plain + low)
    return [
        ("timing", likely, at_most),
        ("cold and recorded forwards", untimed, untimed),
        ("comparing layer outputs", comparing, comparing),
        ("tracing the ops", tracing, tracing),
        *_routes(config, forward.seconds, config.min_time),
    ]


def _training_parts(
    config: ExperimentConfig, forward: guards.ForwardEstimate
) -> list[tuple[str, float, float]]:
    """Both copies' steps (each at its own step's forecast), their timing and scoring; only
    float32's probed step when the autocast step raises here (the run then stops:
    training._probe_both)."""
    plain, low = forward.step_seconds("float32"), forward.step_seconds(config.dtype)
    if forward.raises_in == config.dtype:
        probed = _PROBED_STEPS / 2 * plain
        return [("a float32 step probed (the autocast step raises)", probed, probed)]
    training = (config.steps + _PROBED_STEPS) * (plain + low)
    forwards = forward.mode_seconds("float32") + forward.mode_seconds(config.dtype)
    scoring = HELD_OUT_BATCHES * forwards
    likely, at_most = _timed_modes(config, (plain, low), config.min_time)
    return [
        (f"training 2 × {config.steps} steps", training, training),
        ("timing steps", likely, at_most),
        ("scoring", scoring, scoring),
    ]


def _made(
    parts: Sequence[tuple[str, float, float]], forward_s: float, memory: int | None
) -> Forecast:
    return Forecast(
        seconds=sum(likely for _w, likely, _m in parts),
        at_most_s=sum(at_most for _w, _l, at_most in parts),
        parts=tuple((what, likely) for what, likely, _m in parts),
        forward_s=forward_s,
        memory_bytes=memory,
    )


def forecast(config: ExperimentConfig, forward: guards.ForwardEstimate | None = None) -> Forecast:
    """What running `config` will cost: seconds (likely and at most) and memory, without
    running it. `forward` is the guard's forecast of one forward when the caller has it."""
    if forward is None:
        forward = guards.estimate_forward(config)
    forward_s = forward.seconds
    parts = (
        _training_parts(config, forward)
        if config.mode == "train"
        else _inference_parts(config, forward)
    )
    return _made(parts, forward_s, guards.traced_peak_bytes(config))


def point_seconds(config: ExperimentConfig, forward_s: float) -> float:
    """One sweep point: its timing budget (or the forwards a slow one needs) and its routes,
    each timed for half the budget (and compiled: a point's new shapes compile again)."""
    own = max(config.min_time, SWEEP_POINT_FORWARDS * forward_s)
    return own + sum(likely for _w, likely, _m in _routes(config, forward_s, config.min_time / 2))


def forecast_sweep(configs: Sequence[ExperimentConfig], forward_s: Sequence[float]) -> Forecast:
    """A sweep of `configs` (its planned points), each point's forward forecast given."""
    seconds = [point_seconds(c, f) for c, f in zip(configs, forward_s, strict=True)]
    total = sum(seconds)
    slowest = max(forward_s, default=0.0)
    return Forecast(total, total, ((f"{len(seconds)} points", total),), slowest)


#: Shown a run's forecast when it is long (over ANNOUNCE_ABOVE_S); False cancels the run.
ConfirmFn = Callable[[Forecast], bool]


def ask_if_long(ahead: Forecast, confirm: ConfirmFn | None, reporter: Reporter) -> None:
    """Before anything is built: a long forecast is reported and shown to `confirm`; raises
    Cancelled when it says no."""
    if confirm is None or not ahead.worth_announcing:
        return
    reporter.report(0.0, ahead.text())
    if not confirm(ahead):
        raise Cancelled

"""Refuse configs that would exhaust memory or take too long, before allocating anything.

A single torch op cannot be interrupted, so the window's Cancel cannot rescue a forward pass
that takes minutes; these guards stop such a config up front, with a message saying why.
"""

from __future__ import annotations

import functools
import time

import torch

from autocast_explorer.core.experiment.config import (
    ConfigError,
    ExperimentConfig,
    flops_per_forward,
    parameter_count,
)
from autocast_explorer.core.experiment.model import TORCH_DTYPES
from autocast_explorer.core.experiment.training import HELD_OUT_BATCHES, TRAIN_POOL_BATCHES
from autocast_explorer.core.hardware.cpu import available_memory_bytes

MAX_FORWARD_SECONDS = 10.0
#: A training step costs about three forwards: the forward, then the backward's two GEMMs per
#: layer (gradient of the input and of the weight), each the size of the forward's.
TRAINING_STEP_FORWARDS = 3
#: Float32 copies of the parameters a training run holds at once: the initial model, two probe
#: gradients, and per trained copy its weights, gradients and up to two optimizer states (AdamW).
_TRAINING_PARAMETER_COPIES = {"sgd": 1 + 2 + 2 * 3, "adamw": 1 + 2 + 2 * 4}
_CALIBRATION_SIZE = 256


class GuardError(ConfigError):
    """A config is valid but too big for this machine (memory) or too slow (time)."""


def estimate_peak_bytes(config: ExperimentConfig) -> int:
    """fp32 weights + one low-precision copy + input and every layer's output, in both modes."""
    low_bytes = TORCH_DTYPES[config.dtype].itemsize
    params = parameter_count(config.widths)
    activations = config.batch * sum(config.widths)
    return params * (4 + low_bytes) + activations * (4 + low_bytes) * 2


@functools.cache
def _calibrated_rate(dtype_name: str, threads: int) -> float:
    """FLOP/s of a small GEMM in `dtype` on this CPU, with `threads` threads (cached)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        n = _CALIBRATION_SIZE
        dtype = TORCH_DTYPES[dtype_name]
        a = torch.ones(n, n, dtype=dtype)
        b = torch.ones(n, n, dtype=dtype)
        torch.mm(a, b)
        reps = 0
        start = time.perf_counter()
        while True:
            torch.mm(a, b)
            reps += 1
            elapsed = time.perf_counter() - start
            if elapsed > 0.02 or reps >= 200:
                break
        return 2 * n**3 * reps / max(elapsed, 1e-9)
    finally:
        torch.set_num_threads(previous)


def estimate_training_peak_bytes(config: ExperimentConfig) -> int:
    """Parameter copies, activations saved for backward and their gradients, and the task."""
    low_bytes = TORCH_DTYPES[config.dtype].itemsize
    params = parameter_count(config.widths)
    copies = _TRAINING_PARAMETER_COPIES.get(
        config.optimizer, max(_TRAINING_PARAMETER_COPIES.values())
    )
    activations = config.batch * sum(config.widths)
    task = (TRAIN_POOL_BATCHES + HELD_OUT_BATCHES) * config.batch * (config.widths[0] + 1) * 4
    return params * (4 * copies + low_bytes) + activations * (4 + low_bytes) * 4 + task


def estimate_forward_seconds(config: ExperimentConfig) -> float:
    """FLOPs over the slower of the float32 and low-precision calibration rates."""
    threads = config.threads or torch.get_num_threads()
    rate = min(_calibrated_rate("float32", threads), _calibrated_rate(config.dtype, threads))
    return flops_per_forward(config.widths, config.batch) / rate


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
            f"{budget / 2**20:,.0f} MB; use smaller widths or batch",
        )
    return peak


def check_time(config: ExperimentConfig) -> float:
    """Raise GuardError when one forward (in training: one training step, ≈ 3 forwards) is
    estimated to take over 10 s (unless allowed): nothing can interrupt it once started."""
    seconds = estimate_forward_seconds(config)
    what = "one forward pass"
    if config.mode == "train":
        seconds *= TRAINING_STEP_FORWARDS
        what = f"one training step (≈ {TRAINING_STEP_FORWARDS} forwards)"
    if seconds > MAX_FORWARD_SECONDS and not config.allow_slow:
        raise GuardError(
            "time",
            f"{what} is estimated at {seconds:,.1f} s "
            f"(limit {MAX_FORWARD_SECONDS:.0f} s); use smaller widths or batch, "
            "or allow slow runs (--allow-slow)",
        )
    return seconds


def check(config: ExperimentConfig) -> float:
    """Both guards, memory first (it needs no calibration); returns the forward estimate."""
    check_memory(config)
    return check_time(config)

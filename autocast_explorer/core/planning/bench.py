"""The search's bench: what one candidate's answers measure, and how fast it runs against plain
float32 eager — on the real model, with the project's paired protocol.

A candidate runs on the subject's own model: its layers kept in float32 through interventions'
`keep_float32`, entered around each of its timed blocks (and left again for float32's blocks,
so the baseline pays no wrapper), its threads set the same way. A compiled candidate traces
its wrappers once, so it gets a copy of the model with them in place for its lifetime.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

import torch

from autocast_explorer.core.experiment import guards
from autocast_explorer.core.experiment.certainty import RUN_TARGET
from autocast_explorer.core.experiment.interval import SpeedupInterval
from autocast_explorer.core.experiment.interventions import keep_float32
from autocast_explorer.core.experiment.out_of_memory import is_out_of_memory
from autocast_explorer.core.experiment.routes.implicit import (
    implicit_precision,
    implicit_supported,
    kept_maths,
)
from autocast_explorer.core.experiment.shadow_run import leaf_modules
from autocast_explorer.core.experiment.timing import measure_paired
from autocast_explorer.core.planning.choice import Choice
from autocast_explorer.core.planning.judge import Judge, Measured
from autocast_explorer.core.planning.subject import ForwardFn, Subject
from autocast_explorer.core.runtime.autocast import TORCH_DTYPES, autocast_context
from autocast_explorer.core.runtime.errors import error_text
from autocast_explorer.core.runtime.progress import Reporter
from autocast_explorer.core.runtime.threads import torch_threads


class CandidateFailed(Exception):
    """A candidate that cannot run here (a compile that failed, a forward that raised); the
    message says why in one line."""


class Bench(Protocol):
    """What the search asks of a candidate. `forward_s`: one float32 forward of the timed batch
    (the least a timing needs is a few of them)."""

    forward_s: float

    def judge(self, choice: Choice) -> Measured: ...

    def setup_s(self, choice: Choice) -> float: ...

    def time(
        self, choice: Choice, seconds: float, reporter: Reporter
    ) -> SpeedupInterval | None: ...

    def release(self) -> None: ...


@dataclass
class _Runner:
    """A candidate's forward, and what stays open as long as it does (a compiled copy's kept
    layers)."""

    forward: ForwardFn
    stack: contextlib.ExitStack[bool | None] = field(default_factory=contextlib.ExitStack)


def _lowered_forward(model: torch.nn.Module, dtype: torch.dtype | None) -> ForwardFn:
    def forward(inputs: torch.Tensor) -> object:
        with autocast_context(dtype):
            return model(inputs)

    return forward


@contextlib.contextmanager
def candidate_context(model: torch.nn.Module, choice: Choice) -> Iterator[None]:
    """Around a candidate's calls: its threads, its kept layers (eager: autocast off inside
    them; implicit: float32 maths inside them, as a run's implicit route keeps them; a compiled
    candidate's copy has its own) and the implicit route's setting."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(torch_threads(choice.threads))
        if choice.keep and choice.route == "eager":
            stack.enter_context(keep_float32(model, choice.keep))
        if choice.route == "implicit":
            stack.enter_context(kept_maths(model, choice.keep))
            stack.enter_context(implicit_precision())
        yield


@contextlib.contextmanager
def _warmed(
    entered: Callable[[], contextlib.AbstractContextManager[object]],
    forward: ForwardFn,
    x: torch.Tensor,
    warm: bool,
) -> Iterator[None]:
    """`entered()` around a block, with one untimed call first when the two sides' threads
    differ: the first call after torch.set_num_threads wakes or builds OpenMP's pool (about
    10 ms measured here), which would otherwise land in the block's time."""
    with entered():
        if warm:
            forward(x)
        yield


class LiveBench:
    """The real bench: `subject`'s model against its own float32 eager forward at `threads`."""

    def __init__(self, subject: Subject, judge: Judge, threads: int, forward_s: float) -> None:
        self.subject = subject
        self.judger = judge
        self.threads = threads
        self.forward_s = forward_s
        self._runners: dict[tuple[str, str, tuple[str, ...]], _Runner] = {}
        self._leaves = leaf_modules(subject.model)
        self._slowest_compile_s = 0.0  # this model's own, once one has compiled

    def entered(self, choice: Choice) -> contextlib.AbstractContextManager[None]:
        return candidate_context(self.subject.model, choice)

    def _runner(self, choice: Choice) -> _Runner:
        key = (choice.route, choice.dtype, choice.keep)
        found = self._runners.get(key)
        if found is not None:
            return found
        model = self.subject.model
        stack = contextlib.ExitStack()
        low = TORCH_DTYPES[choice.dtype] if choice.lowered else None
        if choice.route == "implicit":
            if not implicit_supported():
                raise CandidateFailed(f"torch {torch.__version__} has no fp32_precision setting")
            low = None  # float32 tensors; oneDNN's setting lowers the maths
        forward = _lowered_forward(model, low)
        if choice.route == "compiled":
            if choice.keep:
                model = copy.deepcopy(model)
                stack.enter_context(keep_float32(model, choice.keep))
            forward = torch.compile(_lowered_forward(model, low))
        runner = _Runner(forward, stack)
        self._runners[key] = runner
        return runner

    def setup_s(self, choice: Choice) -> float:
        """A compile's forecast before the candidate's first call (0 when it has run): half
        the guards' most for both precisions (this session's fastest compile, else a cold
        one: compile_forecast.py), but never below what this model's own compiles took here."""
        key = (choice.route, choice.dtype, choice.keep)
        if choice.route != "compiled" or key in self._runners:
            return 0.0
        return max(guards.most_compile_s(self._leaves) / 2, self._slowest_compile_s)

    def judge(self, choice: Choice) -> Measured:
        """The criterion's measure of the candidate's answers (a compiled one compiles here)."""
        compiling = self.setup_s(choice) > 0
        start = _now()
        try:
            runner = self._runner(choice)
            with self.entered(choice):
                outputs = self.subject.outputs(runner.forward)
        except CandidateFailed:
            raise
        except Exception as exc:
            if is_out_of_memory(exc):
                raise
            failed = self._runners.pop((choice.route, choice.dtype, choice.keep), None)
            if failed is not None:
                failed.stack.close()
            raise CandidateFailed(error_text(exc)) from None
        if compiling:
            took = _now() - start
            self._slowest_compile_s = max(self._slowest_compile_s, took)
            guards.record_compile(2 * took, self._leaves)
        return self.judger.measure(outputs)

    def time(self, choice: Choice, seconds: float, reporter: Reporter) -> SpeedupInterval | None:
        """float32 eager ÷ the candidate, paired (block after block), for about `seconds` in
        all: at least a quarter of it each side before the ±5% target may stop it early."""
        runner = self._runner(choice)
        model, x = self.subject.model, self.subject.x
        per_side = seconds / 2
        warm = choice.threads != self.threads
        timing = measure_paired(
            [lambda: model(x), lambda: runner.forward(x)],
            min(per_side / 2, self.subject.config.min_time),
            reporter,
            labels=["float32 eager", choice.label()],
            block_contexts=[
                functools.partial(
                    _warmed, functools.partial(torch_threads, self.threads), model, x, warm
                ),
                functools.partial(
                    _warmed, functools.partial(self.entered, choice), runner.forward, x, warm
                ),
            ],
            max_time=per_side,
            target=RUN_TARGET,
        )
        return timing.interval

    def release(self) -> None:
        """Every compiled copy and wrapper let go."""
        for runner in self._runners.values():
            runner.stack.close()
        self._runners.clear()


def _now() -> float:
    return time.perf_counter()


def forward_seconds(forward: Callable[[], object], calls: int = 3) -> float:
    """The fastest of a few float32 forwards: what one call of the timed batch costs."""
    best = math.inf
    for _ in range(calls):
        start = _now()
        forward()
        best = min(best, _now() - start)
    return best

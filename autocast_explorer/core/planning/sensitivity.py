"""Which layers break it: each row's share of the damage and of the time.

For each layer row (subject.py) and the lower dtype:
- one-in: the criterion's measure when only that row runs under autocast (interventions'
  `lower_only`: its output is float32 again for the float32 rows after it);
- leave-out: the measure when every row runs under autocast but that one, kept in float32
  (`keep_float32`); a row inside the user's keep-set is float32 in every candidate, so both
  of its measures are float32's own (`Judge.perfect`);
- time shares: the row's share of one forward's time in float32 and under autocast, from a
  timer around each row's forward over a few forwards (the wrapper's own cost, about a
  microsecond per call, counts in the row's share; a share is of the whole forward, so what
  runs between rows — the model's own code — is in no row).

The user's own keep-set (`subject.kept`, the config's `keep_float32`) stays kept in float32
throughout: the rows are measured as the candidates will run them. Leave-outs are measured only
while the plan's budget has LEAVE_OUT_SHARE of it left (a row not measured is null): the one-ins
rank the rows, and the search needs the rest of the budget.

The first divergent row is the first, in the model's order, whose one-in measure alone fails
the criterion: where the error jumps.
"""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import torch

from autocast_explorer.core.experiment import timing
from autocast_explorer.core.experiment.interventions import around_layers, keep_float32, lower_only
from autocast_explorer.core.experiment.layer_patterns import within
from autocast_explorer.core.experiment.model import low_precision_dtype
from autocast_explorer.core.experiment.out_of_memory import is_out_of_memory
from autocast_explorer.core.planning.criterion import Criterion, parse_criterion
from autocast_explorer.core.planning.document import SensitivityRow
from autocast_explorer.core.planning.judge import NOT_MEASURED, Judge, Measured
from autocast_explorer.core.planning.ranking import first_divergent, ranked
from autocast_explorer.core.planning.subject import ForwardFn, Subject, prepare_subject
from autocast_explorer.core.runtime.autocast import autocast_context
from autocast_explorer.core.runtime.progress import CancelFn, ProgressFn, Reporter
from autocast_explorer.core.runtime.threads import torch_threads

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.config import ExperimentConfig

#: Seconds of forwards each mode's time profile takes at most (at least PROFILE_CALLS forwards
#: after a first, untimed one; at most PROFILE_MAX_CALLS).
PROFILE_SECONDS = 0.2
PROFILE_CALLS = 3
PROFILE_MAX_CALLS = 50
#: Leave-outs are measured while this share of the plan's budget is left.
LEAVE_OUT_SHARE = 0.6


def judged(subject: Subject, judge: Judge, forward: ForwardFn) -> Measured:
    """The measure of `forward`'s answers; NOT_MEASURED when the forward raised (a lowered
    forward that fails is no error of the plan: nothing meets a criterion there)."""
    try:
        return judge.measure(subject.outputs(forward))
    except Exception as exc:
        if is_out_of_memory(exc):
            raise
        return NOT_MEASURED


def _autocast_forward(model: torch.nn.Module, dtype: torch.dtype | None) -> ForwardFn:
    def forward(inputs: torch.Tensor) -> object:
        with autocast_context(dtype):
            return model(inputs)

    return forward


def one_in(subject: Subject, judge: Judge, row: str, dtype: torch.dtype) -> Measured:
    """Only `row` lowered."""
    with lower_only(subject.model, [row], dtype):
        return judged(subject, judge, subject.model)


def leave_out(subject: Subject, judge: Judge, row: str, dtype: torch.dtype) -> Measured:
    """Every row lowered but `row`, kept in float32."""
    with keep_float32(subject.model, [row]):
        return judged(subject, judge, _autocast_forward(subject.model, dtype))


def time_shares(
    model: torch.nn.Module,
    x: torch.Tensor,
    rows: Sequence[str],
    dtype: torch.dtype | None,
    seconds: float = PROFILE_SECONDS,
) -> dict[str, float]:
    """Each row's share of a forward's time (autocast when `dtype`): per forward, the time
    inside the row's own forward over the whole forward's, by the protocol's clock
    (timing.default_clock); the median over the forwards, so one forward stalled by another
    program does not decide it."""
    spent = dict.fromkeys(rows, 0.0)

    def timer(row: str) -> Callable[..., object]:
        def around(
            forward: Callable[..., object], args: tuple[object, ...], kwargs: dict[str, object]
        ) -> object:
            start = timing.default_clock()
            try:
                return forward(*args, **kwargs)
            finally:
                spent[row] += timing.default_clock() - start

        return around

    forward = _autocast_forward(model, dtype)
    forward(x)  # first call untimed: kernel selection, autocast's weight casts
    shares: dict[str, list[float]] = {row: [] for row in rows}
    with contextlib.ExitStack() as stack:
        for row in rows:
            stack.enter_context(around_layers(model, [row], timer(row)))
        elapsed, calls = 0.0, 0
        while calls < PROFILE_CALLS or (elapsed < seconds and calls < PROFILE_MAX_CALLS):
            calls += 1
            spent.update(dict.fromkeys(rows, 0.0))
            start = timing.default_clock()
            forward(x)
            total = timing.default_clock() - start
            elapsed += total
            for row in rows:
                shares[row].append(min(spent[row] / total, 1.0) if total > 0 else 0.0)
    return {row: statistics.median(values) for row, values in shares.items()}


def user_kept(subject: Subject) -> contextlib.AbstractContextManager[None]:
    """The user's own keep-set kept in float32 inside the block."""
    return keep_float32(subject.model, subject.kept)


def measure_rows(
    subject: Subject,
    judge: Judge,
    dtype: torch.dtype,
    reporter: Reporter,
    with_leave_out: bool = True,
    share_left: Callable[[], float] = lambda: 1.0,
) -> list[tuple[str, Measured, Measured]]:
    """(row, one-in, leave-out) for every row, the user's keep-set kept; leave-outs while
    `share_left()` (of the plan's budget) is at least LEAVE_OUT_SHARE. Cancel is checked before
    each row."""
    found = []
    count = len(subject.layers)
    with user_kept(subject):
        for index, row in enumerate(subject.layers):
            reporter.check()
            if within(row, subject.kept):  # float32 in every candidate: lowering it is moot
                found.append((row, judge.perfect(), judge.perfect()))
                continue
            reporter.report(index / max(count, 1), f"lowering {row} alone, then keeping it alone")
            single = one_in(subject, judge, row, dtype)
            kept = NOT_MEASURED
            if with_leave_out and share_left() >= LEAVE_OUT_SHARE:
                kept = leave_out(subject, judge, row, dtype)
            found.append((row, single, kept))
    return found


def sensitivity_rows(
    subject: Subject,
    judge: Judge,
    dtype: torch.dtype,
    reporter: Reporter,
    share_left: Callable[[], float] = lambda: 1.0,
) -> tuple[SensitivityRow, ...]:
    """The locator's rows for `dtype`, in the model's order (`measure_rows`)."""
    measured = measure_rows(subject, judge, dtype, reporter.span(0.0, 0.9), True, share_left)
    reporter.report(0.9, "timing each row's share of a forward")
    reporter.check()
    with user_kept(subject):
        plain = time_shares(subject.model, subject.x, subject.layers, None)
        reporter.check()
        lower = time_shares(subject.model, subject.x, subject.layers, dtype)
    return tuple(
        SensitivityRow(
            name=row,
            one_in=single.finite,
            leave_out=kept.finite,
            time_share_plain=plain[row],
            time_share_lower=lower[row],
        )
        for row, single, kept in measured
    )


def locate(
    config: ExperimentConfig,
    criterion: Criterion | str,
    progress: ProgressFn | None = None,
    cancel: CancelFn | None = None,
) -> tuple[SensitivityRow, ...]:
    """The sensitivity of every row of `config`'s model to `config.dtype`, in the model's order
    (`ranked` sorts them worst first). Raises ConfigError for a criterion the model cannot be
    judged by, Cancelled when `cancel` says so (checked before every row)."""
    if isinstance(criterion, str):
        criterion = parse_criterion(criterion)
    reporter = Reporter(progress, cancel)
    with torch_threads(config.threads), torch.no_grad():
        subject = prepare_subject(config, reporter.span(0.0, 0.2))
        judge = judge_for(subject, criterion)
        rows = sensitivity_rows(
            subject, judge, low_precision_dtype(subject.config), reporter.span(0.2, 1.0)
        )
    reporter.report(1.0, "done")
    return rows


def judge_for(subject: Subject, criterion: Criterion) -> Judge:
    """The subject's float32 answers, ready to judge others by `criterion`."""
    reference = subject.outputs(subject.model)
    return Judge(criterion, reference, subject.labels, subject.config.seed, subject.rows)


__all__ = ["first_divergent", "locate", "ranked", "sensitivity_rows", "time_shares"]

"""The run report's header: the machine in words (one thread is "1 thread")."""

from __future__ import annotations

import pytest

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.summary import format_summary
from tests.edits import edited


@pytest.mark.parametrize(("threads", "words"), [(1, "1 thread"), (2, "2 threads")])
def test_the_header_counts_threads_in_words(threads, words):
    result = run_experiment(
        ExperimentConfig(widths=(8, 4), batch=2, min_time=0.01, threads=threads)
    )
    assert result.environment.threads == threads
    header = format_summary(result).splitlines()[1]
    assert header.endswith(f"· {words}"), header
    assert result.environment.threads_text == words
    other = result.environment.model_copy(update={"threads": threads + 1})
    assert other.threads_text == f"{threads + 1} threads"


def test_the_time_guard_line_writes_milliseconds_as_numbers():
    """A transformer's forecast read "6.38e+03 ms": a number with no exponent, as measured."""
    from autocast_explorer.core.experiment.summary import guard_line

    result = run_experiment(ExperimentConfig(widths=(8, 4), batch=2, min_time=0.01))
    assert result.guard is not None
    slow = edited(result.guard, estimated_forward_ms=6381.7)
    line = guard_line(edited(result, guard=slow))
    assert line.startswith("time guard estimated 6382 ms per forward; measured ")
    assert "e+" not in line
    small = edited(result.guard, estimated_forward_ms=0.04213)
    assert guard_line(edited(result, guard=small)).startswith(
        "time guard estimated 0.0421 ms per forward"
    )


def test_a_peak_rise_under_a_megabyte_states_no_ratio():
    """A tiny run's peak rose 0.07 MB: "12 MB … (170.77×)" compared the estimate with noise."""
    from autocast_explorer.core.experiment.summary import peak_rise_words

    assert peak_rise_words(12.0, 0.07) == "the run's peak rose less than 1 MB"
    assert peak_rise_words(153.0, 116.0) == "the run's peak rose 116 MB (1.32×)"


def test_a_training_runs_guard_line_states_the_step_the_guard_forecast():
    """A traced step (a CNN's is 1.1–1.9 forwards) is stated as forecast; an older file
    without it reads as the 3 forwards assumed then."""
    from autocast_explorer.core.experiment.summary import guard_line

    result = run_experiment(ExperimentConfig(widths=(8, 4), batch=4, mode="train", steps=2))
    assert result.guard is not None
    traced = edited(result.guard, estimated_forward_ms=2.0, estimated_step_ms=2.5)
    assert guard_line(edited(result, guard=traced)).startswith(
        "time guard estimated 2.5 ms per training step; measured "
    )
    older = edited(result.guard, estimated_forward_ms=2.0, estimated_step_ms=None)
    assert guard_line(edited(result, guard=older)).startswith(
        "time guard estimated 6 ms per training step; measured "
    )

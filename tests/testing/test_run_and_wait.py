"""run_and_wait returns the result of a finished run and raises, saying why, for every other end."""

from __future__ import annotations

import pytest

from autocast_explorer.testing import (
    RunCancelled,
    RunFailed,
    RunNotStarted,
    run_and_wait,
)


def test_returns_the_result_the_window_shows(explorer, tiny_config):
    result = run_and_wait(explorer, tiny_config)
    assert result.config == tiny_config
    assert explorer.last_result is result
    assert explorer.runButton.isEnabled()
    assert not explorer.runner.is_running()


def test_a_failed_run_raises_with_the_window_s_message(explorer, tiny_config, monkeypatch):
    from autocast_explorer.core.experiment import engine

    def broken(*_args, **_kwargs):
        raise RuntimeError("the engine broke on purpose")

    monkeypatch.setattr(engine, "run_experiment", broken)
    with pytest.raises(RunFailed) as failure:
        run_and_wait(explorer, tiny_config)
    assert failure.value.message == "RuntimeError: the engine broke on purpose"
    assert explorer.messageBanner.text() == f"Run failed: {failure.value.message}"


def test_a_cancelled_run_raises(explorer, tiny_config):
    # Cancel as soon as the run has started; a long timing budget keeps it from finishing first.
    explorer.experimentStarted.connect(explorer.cancel_experiment)
    with pytest.raises(RunCancelled):
        run_and_wait(explorer, tiny_config.replace(min_time=30.0))
    assert explorer.last_result is None
    assert explorer.runButton.isEnabled()


def test_refused_input_raises_with_the_inline_messages(explorer):
    explorer.widthsEdit.setText("32,zero,4")
    with pytest.raises(RunNotStarted) as refused:
        run_and_wait(explorer)
    assert set(refused.value.errors) == {"widths"}
    assert refused.value.errors == explorer.input_errors()
    assert "widths" in str(refused.value)

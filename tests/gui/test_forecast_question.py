"""A long run asks before it starts: the window shows core's forecast under Run with "Run
anyway" and Cancel, and the run waits for the answer. The forecast is made up here (a fixed
Forecast in place of core's): nothing is timed."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QPushButton, QWidget

from autocast_explorer.core.experiment import engine
from autocast_explorer.core.experiment.forecast import Forecast
from tests.gui.helpers import RUN_TIMEOUT_MS

LONG = Forecast(
    seconds=600.0, at_most_s=1800.0, parts=(("timing", 590.0),), forward_s=2.0, memory_bytes=2**30
)


@pytest.fixture
def long_forecast(monkeypatch):
    """Every run of this test is forecast at LONG (the engine's own guards still run)."""
    monkeypatch.setattr(engine, "forecast", lambda config, estimate: LONG)


def _asked(window, qtbot) -> QWidget:
    bar = window.findChild(QWidget, "forecastBar")
    assert not bar.isVisible()
    with qtbot.waitSignal(window.experimentForecast, timeout=RUN_TIMEOUT_MS) as shown:
        assert window.start_experiment()
    assert shown.args == [LONG]
    assert bar.isVisible()
    text = window.findChild(QLabel, "forecastText").text()
    assert text == (
        "This run is forecast to take about 10 min (up to 30 min): timing 10 min; "
        "one forward 2.0 s; about 1,024 MB of memory."
    )
    return bar


def test_a_long_run_shows_its_forecast_and_cancel_starts_nothing(
    window, qtbot, long_forecast
) -> None:
    bar = _asked(window, qtbot)
    assert window.findChild(QLabel, "progressLabel").text() == "Waiting: run anyway, or cancel?"
    with (
        qtbot.assertNotEmitted(window.experimentFinished, wait=0),
        qtbot.waitSignal(window.experimentCancelled, timeout=RUN_TIMEOUT_MS),
    ):
        qtbot.mouseClick(
            window.findChild(QPushButton, "forecastCancelButton"), Qt.MouseButton.LeftButton
        )
    assert not bar.isVisible()
    assert window.last_result is None
    assert window.runButton.isEnabled()


def test_run_anyway_runs_it(window, qtbot, long_forecast) -> None:
    bar = _asked(window, qtbot)
    with qtbot.waitSignal(window.experimentFinished, timeout=RUN_TIMEOUT_MS) as finished:
        qtbot.mouseClick(
            window.findChild(QPushButton, "runAnywayButton"), Qt.MouseButton.LeftButton
        )
    assert not bar.isVisible()
    result = finished.args[0]
    assert result.guard is not None and result.guard.forecast_s == LONG.seconds


def test_closing_while_it_asks_cancels(window, qtbot, long_forecast) -> None:
    _asked(window, qtbot)
    assert window.close()
    assert not window.runner.is_running()

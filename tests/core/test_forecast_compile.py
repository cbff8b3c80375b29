"""The compile forecast: a cold compile grows with the model's leaf modules from a base, a
cached one does not; before this process compiles, the forecast is their middle and at most
the cold figure; after, the fastest compile scales it. Nothing here compiles."""

from __future__ import annotations

import math

import pytest

from autocast_explorer.core.experiment import compile_forecast, guards
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.forecast import forecast
from tests.steady_rate import steady_rates


@pytest.fixture(autouse=True)
def nothing_compiled(monkeypatch) -> None:
    monkeypatch.setattr(compile_forecast, "_COMPILE_SCALE", [])


def test_before_any_compile_the_forecast_sits_between_cold_and_cached() -> None:
    # bench/guards.py's U-Net: 59 leaf modules, cold 4 + 0.85 · 59 = 54.15 s, cached 3.5 s.
    assert compile_forecast.cold_compile_s(59) == pytest.approx(54.15)
    assert guards.forecast_compile(59) == pytest.approx(math.sqrt(54.15 * 3.5))
    assert guards.most_compile_s(59) == pytest.approx(54.15)
    assert guards.check_compile(59) is None  # nothing measured: nothing refused


def test_a_measured_compile_scales_every_later_forecast() -> None:
    guards.record_compile(54.15 / 2, 59)  # half the cold figure
    guards.record_compile(8.25, 5)  # the cold figure itself: slower, not kept
    assert guards.estimate_compile(5) == pytest.approx(8.25 / 2)
    assert guards.forecast_compile(5) == guards.most_compile_s(5) == pytest.approx(8.25 / 2)


def test_a_routes_run_forecasts_its_compile_likely_and_at_most() -> None:
    config = ExperimentConfig(widths=(32, 16, 4), batch=8, min_time=0.1)
    compiled = config.replace(routes=("eager", "compiled"))
    forward = guards.ForwardEstimate.of_seconds(0.001, "fixed")
    with steady_rates():
        eager, both = forecast(config, forward), forecast(compiled, forward)
    leaves = guards.shadow_run(compiled).leaf_modules  # Linear, ReLU, Linear
    assert leaves == 3
    cold = 4 + 0.85 * 3
    assert dict(both.parts)["compiling (compiled)"] == pytest.approx(math.sqrt(cold * 3.5))
    route = 2 * 0.1  # the compiled route's timing: min_time each side
    assert both.seconds == pytest.approx(eager.seconds + route + math.sqrt(cold * 3.5))
    assert both.at_most_s == pytest.approx(eager.at_most_s + route + cold)

"""The guards without the slow thing: a forward forecast from its traced ops (never run at full
size), memory that counts what lives inside modules, and the run's forecast said before it
starts. Rates are fixed (steady_rate) wherever a decision is asserted: nothing here is timed."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from autocast_explorer.core.experiment import engine, guards
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.forecast import (
    TRACED_OP_SECONDS,
    Forecast,
    duration_text,
    forecast,
    forecast_sweep,
    point_seconds,
    traced_calls,
)
from autocast_explorer.core.experiment.guards import GuardError
from autocast_explorer.core.experiment.op_rates import ConvShape, OpWork, op_works
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.experiment.shadow_run import shadow_run
from autocast_explorer.core.experiment.tensor_trace import TensorTrace
from autocast_explorer.core.runtime.progress import Cancelled
from tests.steady_rate import steady_rates

MODELS = """\
import torch


class Recorded(torch.nn.Module):
    # Two wide layers; every call's input kind and batch is written to `log`.

    def __init__(self, log):
        super().__init__()
        self.log = log
        self.layers = torch.nn.Sequential(
            torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)
        )

    def forward(self, x):
        with open(self.log, "a") as f:
            f.write(f"{type(x).__name__} {x.shape[0]}\\n")
        return self.layers(x)


def recorded(log):
    return Recorded(log), torch.randn(1, 1024)


class Scores(torch.nn.Module):
    # Attention-like: a B×L×L score matrix and its softmax live inside one module; the
    # module returns only B × D.

    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(8))

    def forward(self, x):
        scores = x @ x.transpose(1, 2)
        weights = scores.softmax(-1)
        return (weights @ x).mean(1) * self.scale


def scores(length=1024):
    return torch.nn.Sequential(Scores()), torch.randn(1, length, 8)
"""


@pytest.fixture
def models(tmp_path: Path) -> Path:
    path = tmp_path / "guarded.py"
    path.write_text(MODELS)
    return path


def test_the_guard_refuses_a_slow_model_without_a_full_size_forward(
    models: Path, tmp_path: Path
) -> None:
    log = tmp_path / "calls.txt"
    config = ExperimentConfig(
        model=f"{models}:recorded",
        model_args={"log": str(log)},
        batch=8192,
        memory_budget_mb=1e6,
    )
    # Every op at 1 GFLOP/s: the first layer alone is 2·8192·1024·1024 FLOPs ≈ 17.2 s.
    with steady_rates(1e9) as asked, pytest.raises(GuardError) as refused:
        run_experiment(config)
    assert refused.value.field == "time"
    assert str(refused.value.rule).startswith("one forward pass is estimated at over 17.2 s")
    calls = [line.split() for line in log.read_text().splitlines()]
    real = [int(batch) for kind, batch in calls if kind == "Tensor"]
    fake = [int(batch) for kind, batch in calls if kind == "FakeTensor"]
    assert real == []  # the model never ran on real tensors, at 8192 or at all
    assert fake == [8192, 8192]  # traced once per mode on fake tensors: nothing computed
    # Timing stopped at the first op past the limit: one calibration was asked for.
    assert len(asked) == 1 and asked[0][0] == "linear"


def test_memory_counts_a_large_intermediate_inside_one_module(models: Path) -> None:
    length = 1024
    config = ExperimentConfig(model=f"{models}:scores", batch=2, memory_budget_mb=1e6)
    traced = shadow_run(config)
    assert traced.how == "fake"
    scores = 2 * length * length * 4  # B × L × L float32, and its softmax beside it
    assert 2 * scores <= traced.forward_peak["float32"] < 2 * scores + 2**20
    # Under autocast both are bfloat16: half the bytes.
    assert scores <= traced.forward_peak["bfloat16"] < scores + 2**20
    assert sum(traced.kept.values()) < 2**10  # what the module returns: B × 8
    estimate = guards.traced_peak_bytes(config)
    own = traced.parameter_bytes + traced.input_bytes + guards.RUNTIME_BYTES
    assert estimate == own + traced.peak_bytes
    # What modules return is tiny: the old count (parameters and outputs) missed the scores.
    assert guards.estimate_peak_bytes(config) < scores / 20
    training = guards.traced_peak_bytes(config.replace(mode="train"))
    assert training >= 2 * scores  # the scores and their softmax, then kept for backward


def test_the_trace_counts_what_is_alive_at_once_not_what_was_made() -> None:
    mib = 2**18  # float32 elements in 1 MiB
    before = torch.ones(mib)  # made before the trace: not counted
    with TensorTrace() as trace:
        a = before + before
        b = a + a
        del a
        c = b.view(-1, 2)  # a view shares b's memory
        d = b + b
        del b, c, d
    assert trace.peak_bytes == 2 * 2**20
    assert trace.live_bytes == 0
    assert [w.kind for w in trace.work] == ["bytes"] * 4
    assert [w.flops for w in trace.work] == [3 * 2**20, 3 * 2**20, 0, 3 * 2**20]


def test_an_op_is_read_as_its_kind_and_shape() -> None:
    x, w = torch.empty(2, 16, 64, 64), torch.empty(32, 16, 3, 3)
    out = torch.nn.functional.conv2d(x, w, padding=1)
    args = (x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
    work, memory = op_works(torch.ops.aten.convolution.default, args, {}, out)
    assert work.kind == "aten.conv" and work.dtype == "float32"
    conv = ConvShape.unpacked(work.shape)
    assert (conv.batch, conv.channels, conv.out_channels, conv.spatial) == (2, 16, 32, (64, 64))
    assert work.flops == 2 * 2 * 32 * 16 * 9 * 64 * 64  # torch.utils.flop_counter's count
    # It also moves its input, weight and output: (2·16 + 2·32)·64·64 + 32·16·9 floats.
    assert (memory.kind, memory.flops) == ("bytes", 4 * ((2 * 16 + 2 * 32) * 64 * 64 + 4608))
    timed = ConvShape.unpacked(guards.CALIBRATIONS["aten.conv"].size_class(work.shape))
    assert timed.batch == 2 and timed.kernel == (3, 3) and timed.channels == 16  # both fit
    assert timed.spatial == (64, 64)  # its whole image: the rate follows the image's size
    a, b = torch.empty(8, 64), torch.nn.Linear(64, 32).weight.detach()
    linear, _ = op_works(torch.ops.aten.mm.default, (a, b.t()), {}, a @ b.t())
    assert (linear.kind, linear.shape) == ("linear", (8, 64, 32))  # F.linear's layout
    plain, _ = op_works(torch.ops.aten.mm.default, (a, b.t().contiguous()), {}, a @ b.t())
    assert plain.kind == "aten.mm"
    (view,) = op_works(torch.ops.aten.view.default, (a, [-1]), {}, a.view(-1))
    assert (view.kind, view.flops) == ("bytes", 0)


def test_calibration_stops_once_the_forward_is_surely_too_slow(monkeypatch) -> None:
    asked: list[str] = []

    def rate(kind, shape, dtype, threads):
        asked.append(kind)
        return 1e9

    monkeypatch.setattr(guards, "calibrated_rate", rate)
    big = [OpWork("aten.bmm", 20 * 10**9, (4, 64, 64, 64), "float32")]
    small = [OpWork("aten.mm", 10**6, (64, 64, 64), "float32")]
    estimate = guards.estimate_modes({"float32": big + small}, threads=1, stop_above=10.0)
    assert estimate.at_least and estimate.seconds == pytest.approx(20.0)
    assert asked == ["aten.bmm"]  # the small op was never timed
    assert estimate.basis.endswith("timing stopped once the ops timed so far passed the limit")


def test_past_its_budget_calibration_borrows_its_kinds_rate(monkeypatch) -> None:
    asked: list[tuple[int, ...]] = []

    def rate(kind, shape, dtype, threads):
        asked.append(shape)
        return 2e9

    monkeypatch.setattr(guards, "calibrated_rate", rate)
    work = [OpWork("aten.mm", 10**9 * (3 - i), (2**i, 64, 64), "float32") for i in range(3)]
    estimate = guards.estimate_modes({"float32": work}, threads=1, budget_s=0.0)
    assert asked == [(1, 64, 64)]  # the biggest share timed; the others took its rate
    assert estimate.seconds == pytest.approx(6e9 / 2e9)
    assert "2 sizes not timed (calibration time spent) took their kind's rate" in estimate.basis


def _long_forward() -> guards.ForwardEstimate:
    return guards.ForwardEstimate.of_seconds(2.0, "a fixed forecast")


def test_a_runs_forecast_adds_what_the_run_does_with_its_forwards(monkeypatch) -> None:
    config = ExperimentConfig(widths=(32, 16, 4), batch=8, min_time=0.5)
    traced = shadow_run(config)
    calls = traced_calls(traced.work["float32"]) + 2 * traced_calls(traced.work["bfloat16"])
    with steady_rates(1e6):  # layer outputs compared at a million elements a second
        ahead = forecast(config, _long_forward())
    # Timing: each mode at least 4 calls of 2 s (over min_time); 4 cold and recorded forwards;
    # the float32 layers' outputs (8·16 + 8·16 + 8·4 elements) compared; 3 traced forwards.
    assert dict(ahead.parts) == {
        "timing": 16.0,
        "cold and recorded forwards": 8.0,
        "comparing layer outputs": pytest.approx(288 / 1e6),
        "tracing the ops": pytest.approx(6.0 + calls * TRACED_OP_SECONDS),
    }
    assert ahead.seconds == pytest.approx(30.0 + 288 / 1e6 + calls * TRACED_OP_SECONDS)
    assert ahead.worth_announcing
    assert ahead.memory_bytes == guards.traced_peak_bytes(config)
    monkeypatch.setattr(guards, "forecast_compile", lambda leaves: 30.0 * leaves)
    with steady_rates(1e6):
        compiled = forecast(config.replace(routes=("eager", "compiled")), _long_forward())
    assert traced.leaf_modules == 3  # Linear, ReLU, Linear
    assert dict(compiled.parts)["compiling (compiled)"] == 90.0
    assert compiled.seconds == pytest.approx(ahead.seconds + 16.0 + 90.0)
    training = forecast(config.replace(mode="train", steps=10), _long_forward())
    # 2 copies × (10 steps + 4 probed) × 3 forwards of 2 s; steps timed; held-out scored.
    assert dict(training.parts) == {
        "training 2 × 10 steps": 168.0,
        "timing steps": 48.0,
        "scoring": 16.0,
    }
    assert training.text().startswith(
        "forecast: about 4 min: training 2 × 10 steps 3 min, timing steps 48 s, scoring 16 s; "
        "one forward 2.0 s; about "
    )


def test_a_short_run_is_not_announced() -> None:
    short = Forecast(seconds=19.0, at_most_s=40.0, parts=(("timing", 19.0),), forward_s=0.1)
    assert not short.worth_announcing
    assert short.sentence() == (
        "This run is forecast to take about 19 s (up to 40 s): timing 19 s; one forward 0.1 s."
    )
    assert [duration_text(s) for s in (0.01, 2.34, 45, 180, 3900)] == [
        "10 ms",
        "2.3 s",
        "45 s",
        "3 min",
        "1 h 5 min",
    ]


def test_a_sweeps_forecast_counts_every_point_and_route(monkeypatch) -> None:
    monkeypatch.setattr(guards, "forecast_compile", lambda leaves: 40.0)
    base = ExperimentConfig(widths=(32, 16, 4), min_time=1.0, routes=("eager", "compiled"))
    points = [base.replace(batch=b) for b in (8, 64)]
    # Each point: its budget (1 s, or 8 forwards); its compiled route: 2 × max(0.5, 4 × f)
    # of timing and a compile (new shapes compile again).
    assert point_seconds(points[0], 0.01) == 1.0 + 1.0 + 40.0
    assert point_seconds(points[1], 0.5) == 4.0 + 4.0 + 40.0
    sweep = forecast_sweep(points, [0.01, 0.5])
    assert sweep.seconds == 42.0 + 48.0 and sweep.parts == (("2 points", 90.0),)


def test_a_long_run_asks_before_building_and_stops_when_told(monkeypatch) -> None:
    built: list[object] = []
    monkeypatch.setattr(engine, "build", lambda config: built.append(config))
    long = Forecast(seconds=600.0, at_most_s=900.0, parts=(("timing", 600.0),), forward_s=1.0)
    monkeypatch.setattr(engine, "forecast", lambda config, estimate: long)
    shown: list[Forecast] = []

    def decline(ahead: Forecast) -> bool:
        shown.append(ahead)
        return False

    config = ExperimentConfig(widths=(32, 16, 4), batch=8, min_time=0.02)
    with pytest.raises(Cancelled):
        run_experiment(config, confirm=decline)
    assert shown == [long] and built == []


def test_the_result_records_the_forecasts_and_the_peak(monkeypatch) -> None:
    asked: list[Forecast] = []
    config = ExperimentConfig(widths=(32, 16, 4), batch=8, min_time=0.02)
    result = run_experiment(config, confirm=lambda ahead: asked.append(ahead) or True)
    assert asked == []  # a short run is not announced
    guard = result.guard
    assert guard is not None and guard.forecast_s is not None and guard.forecast_s > 0
    assert guard.memory_estimate_mb == pytest.approx(guards.traced_peak_bytes(config) / 2**20)
    data = json.loads(result.to_json())
    measured = Path("/proc/self/clear_refs").exists()
    if measured:
        assert guard.memory_peak_mb is not None and guard.memory_peak_mb >= 0
        assert data["guard"]["memory_peak_mb"] == pytest.approx(guard.memory_peak_mb)
    for key in ("forecast_s", "memory_estimate_mb", "memory_peak_mb"):
        data["guard"].pop(key, None)  # a file written before these keys
    older = ExperimentResult.from_dict(data).guard
    assert older is not None and older.forecast_s is None and older.memory_peak_mb is None
    assert math.isclose(older.estimated_forward_ms, guard.estimated_forward_ms)


def test_the_command_line_prints_a_long_runs_forecast(monkeypatch, capsys) -> None:
    from autocast_explorer.cli import main

    long = Forecast(seconds=120.0, at_most_s=120.0, parts=(("timing", 120.0),), forward_s=0.01)
    monkeypatch.setattr(engine, "forecast", lambda config, estimate: long)
    code = main(["run", "--widths", "32,16,4", "--batch", "8", "--min-time", "0.02", "--json", "-"])
    assert code == 0
    err = capsys.readouterr().err
    assert "forecast: about 2 min: timing 2 min; one forward 10 ms\n" in err


def test_a_long_sweep_asks_before_its_first_point(monkeypatch) -> None:
    from autocast_explorer.core.sweeps import runner
    from autocast_explorer.core.sweeps.spec import SweepSpec

    built: list[object] = []
    monkeypatch.setattr(runner, "build_model", lambda config: built.append(config))
    long = Forecast(seconds=900.0, at_most_s=900.0, parts=(("2 points", 900.0),), forward_s=0.1)
    monkeypatch.setattr(runner, "forecast_sweep", lambda configs, estimates: long)
    shown: list[Forecast] = []
    base = ExperimentConfig(widths=(32, 16, 4), min_time=0.02)
    with pytest.raises(Cancelled):
        runner.run_spec(
            base, SweepSpec("batch", (1, 4)), confirm=lambda f: shown.append(f) or False
        )
    assert shown == [long] and built == []

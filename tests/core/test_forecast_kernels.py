"""The forward's forecast follows the op the run executes: a convolution timed on its whole image
(its rate follows the image's size on a slow path), an LSTM as oneDNN's layer, and an op that
raises in the autocast dtype leaving that forward out (the run times float32 alone). Rates are
fixed or injected wherever a figure is asserted: nothing here is timed."""

from __future__ import annotations

import pytest
import torch

from autocast_explorer.core.experiment import guards
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.forecast import TRACED_OP_SECONDS, forecast, traced_calls
from autocast_explorer.core.experiment.op_rates import (
    CONV_FLOP_CAP,
    RNN_FLOP_CAP,
    ConvShape,
    OpWork,
)
from autocast_explorer.core.experiment.tensor_trace import TensorTrace
from tests.steady_rate import steady_rates

_ONEDNN_LSTM = pytest.mark.skipif(
    not torch.backends.mkldnn.is_available(), reason="nn.LSTM runs oneDNN's layer only with it"
)


def _conv(batch: int, channels: int, out: int, side: int) -> ConvShape:
    one = (1, 1)
    return ConvShape(batch, channels, out, 1, 0, (side, side), (3, 3), one, one, one, (0, 0))


def test_a_convolution_is_timed_on_its_whole_image() -> None:
    size_class = guards.CALIBRATIONS["aten.conv"].size_class
    small = ConvShape.unpacked(size_class(_conv(64, 32, 64, 32).packed()))
    assert (small.channels, small.out_channels, small.spatial) == (32, 64, (32, 32))
    # 37.7 MFLOP an image: as many images as fit the cap (3), rounded down to a power of two.
    assert small.batch == 2 and 2 * small.flops() > CONV_FLOP_CAP
    assert ConvShape.unpacked(size_class(_conv(1, 32, 64, 32).packed())).batch == 1  # its own
    big = ConvShape.unpacked(size_class(_conv(8, 64, 64, 256).packed()))
    # 4.8 GFLOP an image: one image, halved until under the cap (75 MFLOP), no further.
    assert (big.batch, big.spatial) == (1, (32, 32))
    assert big.flops() <= CONV_FLOP_CAP < 4 * big.flops()


def test_the_cnn_and_lstm_are_forecast_from_their_traced_ops() -> None:
    cnn = ExperimentConfig(model="cnn", image=32, batch=4)
    work, source = guards.forward_work(cnn)
    assert source.startswith("every op of the forward traced at full size")
    convs = [w for w in work["bfloat16"] if w.kind == "aten.conv"]
    assert [ConvShape.unpacked(w.shape).channels for w in convs] == [3, 32]
    assert {w.dtype for w in convs} == {"bfloat16"}
    assert {w.kind for w in work["float32"]} >= {"aten.conv", "bytes", "call"}
    mlp, source = guards.forward_work(ExperimentConfig(widths=(32, 16, 4)))
    assert source == "" and [w.kind for w in mlp["float32"]] == ["linear", "linear"]
    # A GRU runs its steps op by op: its matrix products (input, recurrent, head) say it.
    gru, source = guards.forward_work(ExperimentConfig(model="rnn", cell="gru", depth=1))
    assert source == "" and [w.kind for w in gru["float32"]] == ["linear"] * 3
    lstm, source = guards.forward_work(ExperimentConfig(model="rnn", seq=8, batch=2))
    assert source.startswith("every op of the forward traced")
    if torch.backends.mkldnn.is_available():  # else torch's own cell: its products, traced
        assert "aten.rnn" in {w.kind for w in lstm["bfloat16"]}


@_ONEDNN_LSTM
def test_an_lstm_is_read_as_onednns_layer() -> None:
    lstm = torch.nn.LSTM(24, 64, num_layers=2, batch_first=True)
    with TensorTrace() as trace, torch.no_grad():
        lstm(torch.randn(4, 10, 24))
    layers = [w for w in trace.work if w.kind == "aten.rnn"]
    # (steps, batch, inputs, hidden, gates, cell) of each layer, and its FLOPs at every step.
    assert [w.shape[:5] for w in layers] == [(10, 4, 24, 64, 4), (10, 4, 64, 64, 4)]
    assert [w.flops for w in layers] == [2 * 10 * 4 * 256 * (24 + 64), 2 * 10 * 4 * 256 * 128]
    size_class = guards.CALIBRATIONS["aten.rnn"].size_class
    cell = layers[0].shape[5]
    assert size_class((256, 64, 32, 512, 4, cell)) == (16, 64, 32, 512, 4, cell)  # 16 steps
    timed = size_class((256, 256, 512, 512, 4, cell))
    assert timed[1:5] == (256, 512, 512, 4)  # batch and widths kept: they decide the kernel
    flops = guards.CALIBRATIONS["aten.rnn"].flops
    assert timed[0] == 4 and flops(timed) <= RNN_FLOP_CAP < 2 * flops(timed)


def _raising_in_bfloat16(shape: tuple[int, ...], dtype: torch.dtype | None) -> float:
    if dtype is not None:
        raise RuntimeError("could not create a primitive descriptor for the LSTM forward")
    return 0.001


def test_an_op_that_raises_in_the_low_dtype_leaves_that_forward_out(monkeypatch) -> None:
    op = guards.OpCalibration("an LSTM layer", lambda s: s, lambda s: 10**6, _raising_in_bfloat16)
    monkeypatch.setitem(guards.CALIBRATIONS, "rnn-like", op)
    guards.calibrated_rate.cache_clear()
    try:
        assert guards.calibrated_rate("rnn-like", (1,), "bfloat16", 2) == guards.CANNOT_RUN
        work = {mode: [OpWork("rnn-like", 5 * 10**9, (1,))] for mode in ("float32", "bfloat16")}
        estimate = guards.estimate_modes(work, threads=1)
    finally:
        guards.calibrated_rate.cache_clear()
    # float32: 10⁶ FLOPs per ms → 5 s; bfloat16 raises, so it is not the slower mode.
    assert estimate.seconds == pytest.approx(5.0)
    assert estimate.raises_in == "bfloat16"
    assert "slower mode float32" in estimate.basis
    assert estimate.basis.endswith(
        "; an LSTM layer raises in bfloat16 here: that forward is not timed"
    )


def test_a_run_whose_autocast_forward_raises_is_forecast_as_float32_alone() -> None:
    config = ExperimentConfig(widths=(32, 16, 4), batch=8, min_time=1.0)
    raising = guards.ForwardEstimate.of_seconds(0.5, "fixed", raises_in="bfloat16")
    with steady_rates():
        ahead = forecast(config, raising)
        both = forecast(config, guards.ForwardEstimate.of_seconds(0.5, "fixed"))
    # float32 alone: 4 calls of 0.5 s (over min_time); its cold and recorded forwards; no trace.
    assert dict(ahead.parts) == {
        "timing float32 (the autocast forward raises)": 2.0,
        "cold and recorded forwards": 1.0,
    }
    assert ahead.seconds == ahead.at_most_s == 3.0
    assert dict(both.parts)["timing"] == 4.0 and both.seconds > 2 * ahead.seconds
    training = forecast(config.replace(mode="train", steps=20), raising)
    # The run stops after float32's probed step (two steps' time: 2 × 3 forwards of 0.5 s).
    assert dict(training.parts) == {"a float32 step probed (the autocast step raises)": 3.0}


def test_a_convolutions_backward_is_read_with_the_gradients_it_makes() -> None:
    conv = torch.nn.Conv2d(8, 16, 3, padding=1)
    x = torch.randn(2, 8, 12, 12)  # the input needs no gradient: only the weight's is made
    with TensorTrace() as trace:
        conv(x).sum().backward()
    (backward,) = [w for w in trace.work if w.kind == "aten.conv_backward"]
    assert backward.shape[:2] == (0, 1)
    shape = ConvShape.unpacked(backward.shape[2:])
    assert (shape.batch, shape.channels, shape.out_channels, shape.spatial) == (2, 8, 16, (12, 12))
    assert backward.flops == shape.flops() == 2 * 2 * 16 * 8 * 9 * 12 * 12
    calibration = guards.CALIBRATIONS["aten.conv_backward"]
    assert calibration.size_class(backward.shape)[:2] == (0, 1)
    assert calibration.flops((1, 1, *backward.shape[2:])) == 2 * backward.flops


def test_a_training_step_is_forecast_from_its_traced_ops() -> None:
    config = ExperimentConfig(model="cnn", image=32, batch=4, mode="train", threads=1)
    with steady_rates() as asked:
        estimate = guards.estimate_forward(config)
    assert estimate.steps_traced
    assert "aten.conv_backward" in {kind for kind, *_ in asked}
    # Every op at 1 GFLOP/s: each mode's step is its traced step's work, forward included.
    traced = guards.shadow_run(config)
    for mode in ("float32", "bfloat16"):
        work = sum(w.flops for w in traced.step_work[mode])
        assert estimate.step_seconds(mode) == pytest.approx(work / 1e9)
        assert estimate.step_seconds(mode) > estimate.mode_seconds(mode)
    assert estimate.step_seconds() == max(estimate.step_seconds(m) for m in estimate.modes)
    # The result records the step it forecast, and the summary's guard line states it.
    assert estimate.estimated_step_ms == pytest.approx(estimate.step_seconds() * 1e3)
    assert estimate.to_dict()["estimated_step_ms"] == estimate.estimated_step_ms
    # A family forecast from its matrix products keeps 3 forwards a step.
    mlp = guards.ForwardEstimate.of_seconds(0.5, "fixed")
    assert not mlp.steps_traced and mlp.step_seconds("float32") == 1.5


def test_each_mode_is_forecast_at_its_own_forward() -> None:
    config = ExperimentConfig(widths=(32, 16, 4), batch=8, min_time=1.0)
    # bfloat16 16× float32's forward (a convolution's slow path on an AVX2 CPU).
    modes = {"float32": 0.2, "bfloat16": 3.2}
    forward = guards.ForwardEstimate.of_seconds(3.2, "fixed", modes=modes)
    traced = guards.shadow_run(config)
    ops = traced_calls(traced.work["float32"]) + 2 * traced_calls(traced.work["bfloat16"])
    with steady_rates():
        parts = dict(forecast(config, forward).parts)
    # float32's timing is its min_time; bfloat16's is 4 calls of 3.2 s.
    assert parts["timing"] == pytest.approx(1.0 + 12.8)
    assert parts["cold and recorded forwards"] == pytest.approx(2 * (0.2 + 3.2))
    assert parts["tracing the ops"] == pytest.approx(0.2 + 2 * 3.2 + ops * TRACED_OP_SECONDS)
    steps = guards.ForwardEstimate.of_seconds(3.2, "fixed", modes=modes)
    stepped = steps.with_steps(guards.ForwardEstimate.of_seconds(3.5, "steps", modes=modes))
    training = dict(forecast(config.replace(mode="train", steps=6), stepped).parts)
    # Each copy's 6 steps and 4 probed ones at its own step (traced: 0.2 s and 3.2 s here).
    assert training["training 2 × 6 steps"] == pytest.approx(10 * (0.2 + 3.2))


def test_past_its_budget_a_kind_not_timed_yet_is_still_timed(monkeypatch) -> None:
    asked: list[str] = []
    # Under the AVX2 switches a bfloat16 convolution's backward ran 20× its forward's rate.
    rates = {"aten.conv": 1e9, "aten.conv_backward": 2e10}

    def rate(kind: str, shape: tuple[int, ...], dtype: str, threads: int) -> float:
        asked.append(kind)
        return rates[kind]

    monkeypatch.setattr(guards, "calibrated_rate", rate)
    big, small = _conv(4, 32, 64, 32).packed(), _conv(4, 64, 64, 16).packed()
    work = [
        OpWork("aten.conv", 4 * 10**9, big, "bfloat16"),
        OpWork("aten.conv", 2 * 10**9, small, "bfloat16"),
        OpWork("aten.conv_backward", 10**9, (1, 1, *big), "bfloat16"),
    ]
    estimate = guards.estimate_modes({"bfloat16": work}, threads=1, budget_s=0.0)
    # The second convolution borrows the first's rate; the backward is timed, not borrowed.
    assert asked == ["aten.conv", "aten.conv_backward"]
    assert estimate.seconds == pytest.approx(6.0 + 10**9 / 2e10)

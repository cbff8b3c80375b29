"""The forward's forecast follows the op the run executes: a convolution timed on its whole image
(its rate follows the image's size on a slow path), an LSTM as oneDNN's layer, and an op that
raises in the autocast dtype leaving that forward out (the run times float32 alone). Rates are
fixed or injected wherever a figure is asserted: nothing here is timed."""

from __future__ import annotations

import pytest
import torch

from autocast_explorer.core.experiment import guards
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.forecast import forecast
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

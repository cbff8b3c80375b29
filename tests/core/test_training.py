"""Training mode: both copies measured from one initialisation; dtypes, saved bytes, scaler."""

import math

import pytest
import torch

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.model import build_model
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.experiment.training import (
    make_task,
    probe_step,
    train_side_by_side,
)
from autocast_explorer.core.runtime.autocast import TORCH_DTYPES
from autocast_explorer.core.runtime.progress import Cancelled, Reporter

SMALL = {"widths": (32, 64, 4), "batch": 32, "threads": 1, "min_time": 0.02, "mode": "train"}


@pytest.fixture(scope="module")
def bf16_run() -> ExperimentResult:
    return run_experiment(ExperimentConfig(**SMALL, steps=30))


def test_loss_and_gradients_stay_float32_under_autocast(bf16_run):
    train = bf16_run.train
    assert train.loss_dtype == {"plain": "float32", "autocast": "float32"}
    assert train.output_dtype == {"plain": "float32", "autocast": "bfloat16"}
    assert set(train.grad_dtypes) == {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}
    assert set(train.grad_dtypes.values()) == {"float32"}
    assert set(train.grad_dtypes_plain.values()) == {"float32"}


def test_both_copies_start_equal_and_the_float32_loss_falls(bf16_run):
    plain, auto = bf16_run.train.loss["plain"], bf16_run.train.loss["autocast"]
    assert len(plain) == len(auto) == 30
    assert auto[0] == pytest.approx(plain[0], rel=1e-2)  # same weights, same batch
    assert plain != auto  # the autocast copy really ran in bfloat16
    assert sum(plain[-5:]) / 5 < 0.5 * plain[0]
    assert sum(auto[-5:]) / 5 < 0.5 * auto[0]
    assert bf16_run.train.accuracy["plain"] > 1.5 / 4  # well above chance (4 classes)


def test_step_times_use_the_timing_protocol_and_phases_are_measured(bf16_run):
    for stats in (bf16_run.plain, bf16_run.autocast):
        assert stats.samples >= 3 and stats.median_ms > 0 and stats.cold_ms > 0
    for phases in bf16_run.train.phases.values():
        assert phases.forward_ms > 0 and phases.backward_ms > 0 and phases.optimizer_ms > 0


def test_backward_is_traced_and_runs_in_the_low_dtype(bf16_run):
    backward = bf16_run.train.ops["autocast"]["backward"]
    mm_dtypes = {d for op in backward if op.op == "aten.mm.default" for d in op.out_dtypes}
    assert mm_dtypes == {"bfloat16"}
    plain_mm = {
        d
        for op in bf16_run.train.ops["plain"]["backward"]
        if op.op == "aten.mm.default"
        for d in op.out_dtypes
    }
    assert plain_mm == {"float32"}
    fc2 = next(layer for layer in bf16_run.train.layers if layer.name == "fc2")
    assert fc2.forward["autocast"] == ("bfloat16", "bfloat16")
    assert fc2.backward["autocast"][0] == "bfloat16"
    assert fc2.backward["plain"] == ("float32", "float32")


def test_bf16_needs_no_scaler(bf16_run):
    scaler = bf16_run.train.scaler
    assert not scaler.used and scaler.final_scale is None and scaler.skipped_steps == 0


def test_train_object_round_trips_and_old_results_still_load(bf16_run):
    data = bf16_run.to_dict()
    assert data["config"]["mode"] == "train" and data["config"]["steps"] == 30
    assert data["config"]["optimizer"] == "sgd" and data["config"]["lr"] == 0.05
    assert len(data["train"]["loss"]["plain"]) == 30
    again = ExperimentResult.from_json(bf16_run.to_json())
    assert again.train == bf16_run.train
    old = {k: v for k, v in data.items() if k != "train"}
    old["config"] = {k: v for k, v in data["config"].items() if k not in ("mode", "steps", "lr")}
    loaded = ExperimentResult.from_dict(old)
    assert loaded.train is None and loaded.config.mode == "infer"


def test_saved_bytes_halve_for_large_activations():
    config = ExperimentConfig(widths=(256, 1024, 1024, 10), batch=256, mode="train")
    model = build_model(config)
    x, y = make_task(config).batch(0)
    plain = probe_step(config, build_model(config), x, y, None)
    auto = probe_step(config, model, x, y, torch.bfloat16)
    assert plain.saved_tensors == auto.saved_tensors
    # float32: x, every layer's weight and input, and the ReLU outputs at 4 bytes each.
    assert plain.saved_bytes > 8_000_000
    assert auto.saved_bytes < 0.6 * plain.saved_bytes


def test_same_batches_for_both_runs_and_every_call():
    config = ExperimentConfig(**SMALL)
    first, second = make_task(config), make_task(config)
    for (xa, ya), (xb, yb) in zip(first.batches, second.batches, strict=True):
        assert torch.equal(xa, xb) and torch.equal(ya, yb)


def test_float16_uses_a_grad_scaler_and_without_it_gradients_underflow():
    # Inputs around 1e-6 make the first layer's weight gradients smaller than float16's
    # smallest subnormal (6e-8): they underflow unless the loss is scaled first.
    tiny = {**SMALL, "dtype": "float16", "steps": 3, "input_scale": 1e-6}
    scaled = run_experiment(ExperimentConfig(**tiny)).train.scaler
    assert scaled.used and scaled.enabled
    assert scaled.init_scale == 2.0**16 and scaled.final_scale > 0
    assert scaled.skipped_steps >= 0
    unscaled = run_experiment(ExperimentConfig(**tiny, scaler=False)).train.scaler
    assert not unscaled.used and unscaled.final_scale is None
    assert unscaled.underflowed_grads > scaled.underflowed_grads
    assert unscaled.underflowed_grads > 0.01 * unscaled.grad_elements


def test_losses_stream_per_step_and_cancel_stops_between_steps():
    seen = []

    def partial(step):
        seen.append(step)

    with pytest.raises(Cancelled):
        train_side_by_side(
            ExperimentConfig(**SMALL, steps=50),
            Reporter(cancel=lambda: len(seen) >= 3),
            partial,
        )
    assert [s.step for s in seen] == [1, 2, 3]
    assert all(s.steps == 50 and math.isfinite(s.loss_autocast) for s in seen)


@pytest.mark.parametrize("optimizer", ["sgd", "adamw"])
def test_each_optimizer_lowers_the_loss(optimizer):
    from autocast_explorer.core.experiment.config_parts import DEFAULT_LR

    config = ExperimentConfig(**SMALL, steps=25, optimizer=optimizer, lr=DEFAULT_LR[optimizer])
    run = train_side_by_side(config, Reporter())
    loss = run.report.loss["plain"]
    assert loss[-1] < loss[0]
    assert run.trainers["plain"].model.fc1.weight.dtype == TORCH_DTYPES["float32"]

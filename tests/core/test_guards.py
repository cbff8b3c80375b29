import pytest

from autocast_explorer.core.experiment import guards
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.guards import GuardError


def test_peak_estimate_counts_weights_copies_and_activations():
    config = ExperimentConfig(widths=(10, 20), batch=3)
    params = 10 * 20 + 20
    activations = 3 * (10 + 20)
    expected = params * (4 + 2) + activations * (4 + 2) * 2
    assert guards.estimate_peak_bytes(config) == expected


def test_memory_guard_refuses_before_allocating(monkeypatch):
    built = []
    monkeypatch.setattr("autocast_explorer.core.experiment.engine.build", lambda c: built.append(c))
    config = ExperimentConfig(widths=(4096, 4096, 10), batch=8, memory_budget_mb=1)
    with pytest.raises(GuardError) as info:
        run_experiment(config)
    assert info.value.field == "memory"
    assert "MB" in str(info.value)
    assert built == []


def test_memory_guard_default_budget_is_half_of_available(monkeypatch):
    monkeypatch.setattr(guards, "available_memory_bytes", lambda: 200 * 2**20)
    assert guards.memory_budget_bytes(ExperimentConfig()) == 100 * 2**20
    small = ExperimentConfig()
    assert guards.check_memory(small) == guards.estimate_peak_bytes(small)
    with pytest.raises(GuardError):
        guards.check_memory(ExperimentConfig(widths=(4096, 4096, 4096), batch=4096))


def test_time_guard_refuses_slow_configs_unless_allowed(monkeypatch):
    # Pretend this CPU manages 1 GFLOP/s: 2·1024·(4096·4096·2) FLOPs ≈ 68.7 s.
    monkeypatch.setattr(guards, "_calibrated_rate", lambda dtype, threads: 1e9)
    slow = ExperimentConfig(widths=(4096, 4096, 4096), batch=1024, memory_budget_mb=1e6)
    with pytest.raises(GuardError) as info:
        guards.check(slow)
    assert info.value.field == "time"
    assert "68.7 s" in str(info.value)
    assert "--allow-slow" in str(info.value)
    assert guards.check(slow.replace(allow_slow=True)) == pytest.approx(68.7, abs=0.1)


def test_time_estimate_uses_a_real_calibration():
    rate = guards._calibrated_rate("float32", 1)
    assert 1e8 < rate < 1e13
    seconds = guards.estimate_forward_seconds(ExperimentConfig(threads=1))
    assert seconds == pytest.approx(
        2 * 128 * (256 * 256 * 2 + 2560) / min(rate, guards._calibrated_rate("bfloat16", 1))
    )


def test_time_guard_counts_a_training_step_as_three_forwards(monkeypatch):
    monkeypatch.setattr(guards, "estimate_forward_seconds", lambda config: 4.0)
    assert guards.check_time(ExperimentConfig()) == 4.0
    with pytest.raises(GuardError) as info:
        guards.check_time(ExperimentConfig(mode="train"))
    assert "one training step" in str(info.value) and "12.0 s" in str(info.value)
    assert guards.check_time(ExperimentConfig(mode="train", allow_slow=True)) == 12.0


def test_memory_guard_refuses_a_training_run_before_building(monkeypatch):
    built = []
    monkeypatch.setattr(
        "autocast_explorer.core.experiment.training.make_task", lambda *a: built.append(a)
    )
    infer = ExperimentConfig(widths=(512, 512, 10), batch=64)
    train = infer.replace(mode="train")
    assert guards.estimate_training_peak_bytes(train) > guards.estimate_peak_bytes(infer)
    budget_mb = guards.estimate_peak_bytes(infer) / 2**20 * 1.01
    guards.check_memory(infer.replace(memory_budget_mb=budget_mb))
    with pytest.raises(GuardError) as info:
        run_experiment(train.replace(memory_budget_mb=budget_mb))
    assert info.value.field == "memory"
    assert built == []

import pytest
import torch

from autocast_explorer.core.experiment import guards, memory_bound
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.guards import GuardError
from tests.steady_rate import steady_rates


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
    monkeypatch.setattr(memory_bound, "available_memory_bytes", lambda: 200 * 2**20)
    assert guards.memory_budget_bytes(ExperimentConfig()) == 100 * 2**20
    small = ExperimentConfig()
    assert guards.check_memory(small) == guards.traced_peak_bytes(small)
    with pytest.raises(GuardError):
        guards.check_memory(ExperimentConfig(widths=(4096, 4096, 4096), batch=4096))
    with pytest.raises(GuardError):  # the window's quick bound, on its own thread
        guards.check_memory_before_running(ExperimentConfig(widths=(4096, 4096), batch=4096))


def test_time_guard_refuses_slow_configs_unless_allowed():
    # Every op at 1 GFLOP/s: 2·1024·(4096·4096·2) FLOPs ≈ 68.7 s.
    slow = ExperimentConfig(widths=(4096, 4096, 4096), batch=1024, memory_budget_mb=1e6)
    with steady_rates(1e9), pytest.raises(GuardError) as info:
        guards.check(slow)
    assert info.value.field == "time"
    assert "68.7 s" in str(info.value)
    assert "--allow-slow" in str(info.value)
    with steady_rates(1e9):
        assert guards.check(slow.replace(allow_slow=True)) == pytest.approx(68.7, abs=0.1)


def test_estimate_sums_each_layer_at_its_own_size_class_and_slower_mode(monkeypatch):
    # An AVX2-like host: bfloat16 runs at a tenth of float32's rate, small layers slower.
    calls = []

    def rate(kind, shape, dtype, threads):
        calls.append((kind, shape, dtype, threads))
        base = 60e9 if dtype == "float32" else 6e9
        return base * (0.5 if shape[2] < 64 else 1.0)

    monkeypatch.setattr(guards, "calibrated_rate", rate)
    config = ExperimentConfig(widths=(2048, 2048, 2048, 10), batch=1024, threads=2)
    estimate = guards.estimate_forward(config)
    big = 2 * 1024 * 2048 * 2048
    head = 2 * 1024 * 2048 * 10
    assert estimate.seconds == pytest.approx(2 * big / 6e9 + head / 3e9)
    assert {c[1] for c in calls} == {(256, 512, 512), (256, 512, 16)}
    assert {c[2] for c in calls} == {"float32", "bfloat16"} and {c[3] for c in calls} == {2}
    assert estimate.basis == (
        "nn.Linear at 256×512→512, 256×512→16 timed in float32 and under bfloat16 autocast, "
        "2 threads; slower mode bfloat16"
    )
    assert estimate.to_dict() == {
        "estimated_forward_ms": pytest.approx(estimate.seconds * 1e3),
        "basis": estimate.basis,
    }


def test_other_op_kinds_plug_in_their_own_calibration(monkeypatch):
    timed = []

    def time_conv(shape, dtype):
        timed.append((shape, dtype))
        return 0.002

    conv = guards.OpCalibration("nn.Conv2d", lambda s: s, lambda s: 1_000_000, time_conv)
    monkeypatch.setitem(guards.CALIBRATIONS, "conv2d", conv)
    guards.calibrated_rate.cache_clear()
    items = [guards.OpWork("conv2d", 4_000_000, (8, 3, 32, 32))]
    estimate = guards.estimate_work(items, "bfloat16", 1)
    # 1 MFLOP per 2 ms → 0.5 GFLOP/s, so 4 MFLOP take 8 ms in either mode.
    assert estimate.seconds == pytest.approx(0.008)
    assert estimate.basis.startswith("nn.Conv2d at 8×3×32→32 timed in float32")
    assert sorted(str(d) for _, d in timed) == ["None", "torch.bfloat16"]
    guards.calibrated_rate.cache_clear()


def test_threads_are_credited_at_least_one_threads_rate(monkeypatch):
    # A busy machine: each call on 2 threads waits 8 ms for the second core, however small
    # the op; on 1 thread the same 1 MFLOP takes 20 µs (50 GFLOP/s).
    seconds = {1: 2e-5, 2: 8e-3}

    def time_call(shape, dtype):
        return seconds[torch.get_num_threads()]

    op = guards.OpCalibration("op", lambda s: s, lambda s: 1_000_000, time_call)
    monkeypatch.setitem(guards.CALIBRATIONS, "op", op)
    guards.calibrated_rate.cache_clear()
    assert guards.calibrated_rate("op", (1,), "float32", 2) == pytest.approx(5e10)
    # An idle machine with cores to spare keeps the faster multi-thread rate.
    seconds[2] = 1e-5
    assert guards.calibrated_rate("op", (1,), "bfloat16", 2) == pytest.approx(1e11)
    work = [guards.OpWork("op", 10**9, (1,))]
    assert guards.estimate_work(work, "bfloat16", 2).seconds == pytest.approx(1e9 / 5e10)
    guards.calibrated_rate.cache_clear()


def test_time_estimate_uses_a_real_calibration_of_the_linear_layers():
    guards.calibrated_rate.cache_clear()
    config = ExperimentConfig(threads=1)
    rates = {
        (shape, mode): guards.calibrated_rate("linear", shape, mode, 1)
        for shape in ((128, 256, 256), (128, 256, 16))
        for mode in ("float32", "bfloat16")
    }
    assert all(1e6 < r < 1e14 for r in rates.values())
    per_mode = {
        mode: sum(
            2 * 128 * a * b / rates[(guards._linear_class((128, a, b)), mode)]
            for a, b in ((256, 256), (256, 256), (256, 10))
        )
        for mode in ("float32", "bfloat16")
    }
    estimate = guards.estimate_forward(config)
    assert estimate.seconds == pytest.approx(max(per_mode.values()))
    assert estimate.basis.endswith(f"slower mode {max(per_mode, key=per_mode.get)}")


def test_size_classes_round_to_powers_of_two_and_cap_the_calibration():
    assert guards._linear_class((128, 256, 10)) == (128, 256, 16)
    assert guards._linear_class((1000, 3000, 100)) == (256, 512, 128)
    assert guards._linear_class((3, 48, 4096)) == (4, 64, 512)


def test_result_records_the_guard_and_reads_old_files_without_it():
    import json

    from autocast_explorer.core.experiment.result import ExperimentResult

    result = run_experiment(ExperimentConfig(widths=(32, 16, 4), batch=8, min_time=0.02))
    assert result.guard is not None
    data = json.loads(result.to_json())
    assert data["guard"]["estimated_forward_ms"] == pytest.approx(result.guard.estimated_forward_ms)
    assert data["guard"]["basis"].startswith("nn.Linear at 8×32→16, 8×16→16")
    assert ExperimentResult.from_dict(data).guard == result.guard
    del data["guard"]
    assert ExperimentResult.from_dict(data).guard is None


def test_time_guard_counts_a_training_step_as_three_forwards(monkeypatch):
    monkeypatch.setattr(
        guards,
        "estimate_forward",
        lambda config, stop_above=None: guards.ForwardEstimate.of_seconds(4.0, "injected"),
    )
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
    assert guards.traced_peak_bytes(train) > guards.traced_peak_bytes(infer)
    budget_mb = guards.traced_peak_bytes(infer) / 2**20 * 1.01
    guards.check_memory(infer.replace(memory_budget_mb=budget_mb))
    with pytest.raises(GuardError) as info:
        run_experiment(train.replace(memory_budget_mb=budget_mb))
    assert info.value.field == "memory"
    assert built == []


def test_a_module_level_model_is_built_for_real_before_the_guards_trace(tmp_path, monkeypatch):
    """The guards trace on fake tensors; a user's module imported under that mode would keep a
    fake model for the run itself (the module is imported once per process)."""
    from torch._subclasses.fake_tensor import FakeTensor

    (tmp_path / "module_level_model.py").write_text(
        "import torch\n"
        "MODEL = torch.nn.Sequential(torch.nn.Linear(8, 4))\n"
        "def build():\n"
        "    return MODEL, torch.randn(1, 8)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    config = ExperimentConfig(model="module_level_model:build", batch=3, min_time=0.02)
    result = run_experiment(config)
    import module_level_model

    assert not isinstance(module_level_model.MODEL[0].weight, FakeTensor)
    assert result.agreement is not None and result.agreement.rows == 3


def test_quick_bound_knows_each_lower_dtypes_size_as_torch_does():
    from autocast_explorer.core.runtime.dtypes import DTYPES

    sizes = {name: getattr(torch, name).itemsize for name in DTYPES}
    assert sizes == memory_bound.LOW_DTYPE_BYTES


def test_quick_bound_imports_no_torch():
    """The window checks its inputs with it before torch has loaded."""
    import subprocess
    import sys

    code = (
        "import sys; import autocast_explorer.core.experiment.memory_bound as m; "
        "from autocast_explorer.core.experiment.config import ExperimentConfig; "
        "m.check_memory_before_running(ExperimentConfig()); print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

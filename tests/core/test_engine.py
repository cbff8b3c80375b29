"""The engine against the tutorial's own code, and the dtypes it measures."""

import threading

import pytest
import torch

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.model import build
from autocast_explorer.core.runtime.progress import Cancelled
from tests.steady_clock import steady_timing

FAST = {"min_time": 0.02}


def tutorial_model_and_input():
    """The closing example of shared/seed/autocast-on-cpu-tutorial.txt, verbatim."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 256),
        torch.nn.ReLU(),
        torch.nn.Linear(256, 256),
        torch.nn.ReLU(),
        torch.nn.Linear(256, 10),
    )
    model.eval()
    x = torch.randn(128, 256)
    return model, x


def test_default_model_is_bit_identical_to_the_tutorial():
    ref_model, ref_x = tutorial_model_and_input()
    model, x = build(ExperimentConfig())
    assert torch.equal(x, ref_x)
    with torch.no_grad():
        assert torch.equal(model(x), ref_model(ref_x))
        with torch.autocast("cpu"):
            assert torch.equal(model(x), ref_model(ref_x))


@pytest.fixture(scope="module")
def default_result():
    return run_experiment(ExperimentConfig(**FAST))


def test_default_experiment_reproduces_the_tutorial(default_result):
    r = default_result
    assert r.output_dtype_plain == "float32"
    assert r.output_dtype_autocast == "bfloat16"
    assert (r.agreement.agree, r.agreement.rows) == (128, 128)
    assert r.agreement.allclose is True
    assert r.agreement.atol == 0.05
    ref_model, ref_x = tutorial_model_and_input()
    with torch.no_grad():
        plain = ref_model(ref_x)
        with torch.autocast("cpu"):
            auto = ref_model(ref_x)
    diff = (plain - auto.float()).abs()
    assert r.agreement.max_abs_diff == pytest.approx(float(diff.max()), rel=1e-6)
    assert r.agreement.mean_abs_diff == pytest.approx(float(diff.mean()), rel=1e-6)


def test_layer_dtypes_are_measured(default_result):
    layers = {layer.name: layer for layer in default_result.layers}
    assert list(layers) == ["fc1", "relu1", "fc2", "relu2", "fc3"]
    assert layers["fc1"].kind == "Linear"
    assert (layers["fc1"].autocast.in_dtype, layers["fc1"].autocast.out_dtype) == (
        "float32",
        "bfloat16",
    )
    # ReLU follows its (already bfloat16) input under autocast.
    assert (layers["relu1"].autocast.in_dtype, layers["relu1"].autocast.out_dtype) == (
        "bfloat16",
        "bfloat16",
    )
    assert all(layer.plain.out_dtype == "float32" for layer in default_result.layers)
    assert layers["fc3"].out_shape == (128, 10)


def test_latency_statistics_are_consistent(default_result):
    for stats in (default_result.plain, default_result.autocast):
        assert stats.samples >= 3  # 5 blocks, or 3 when one call is slow
        assert 0 < stats.p25_ms <= stats.median_ms <= stats.p75_ms
        assert stats.iqr_ms == pytest.approx(stats.p75_ms - stats.p25_ms)
        assert stats.cold_ms > 0
        assert len(stats.times_ms) == stats.samples
    env = default_result.environment
    assert env.torch_version == torch.__version__
    assert env.threads == torch.get_num_threads()


def test_the_figure_is_the_paired_estimate_inside_its_interval():
    """Not the ratio of the medians: the paired ratios' estimate, inside its own interval.
    On a steady clock, so that a busy machine cannot leave the run without pairs."""
    with steady_timing():
        result = run_experiment(ExperimentConfig(widths=(32, 16, 4), batch=8, **FAST))
    interval = result.evidence.interval
    assert interval is not None and interval.pairs >= 2
    assert result.speedup == interval.estimate
    assert result.speedup != result.plain.median_ms / result.autocast.median_ms
    assert interval.low <= result.speedup <= interval.high


def test_softmax_head_reports_the_dtype_it_really_produced():
    result = run_experiment(ExperimentConfig(widths=(16, 8, 4), batch=4, head="softmax", **FAST))
    model, x = build(result.config)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        truth = model(x).dtype
    # On CPU softmax follows its input: bfloat16 in, bfloat16 out (not float32 as on CUDA).
    assert result.output_dtype_autocast == str(truth).removeprefix("torch.")
    assert result.layers[-1].name == "softmax"
    assert result.layers[-1].autocast.in_dtype == "bfloat16"
    assert result.layers[-1].autocast.out_dtype == result.output_dtype_autocast


def test_float16_autocast():
    result = run_experiment(ExperimentConfig(widths=(16, 8, 4), batch=4, dtype="float16", **FAST))
    assert result.output_dtype_autocast == "float16"
    assert result.layers[0].autocast.out_dtype == "float16"


def test_threads_are_applied_and_restored():
    before = torch.get_num_threads()
    result = run_experiment(ExperimentConfig(widths=(8, 4), batch=2, threads=1, **FAST))
    assert result.environment.threads == 1
    assert torch.get_num_threads() == before


def test_progress_is_reported_in_order():
    seen = []
    run_experiment(
        ExperimentConfig(widths=(8, 4), batch=2, **FAST), progress=lambda f, m: seen.append((f, m))
    )
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions)
    assert fractions[-1] == 1.0
    assert any("timing" in m for _, m in seen)


def test_cancellation_between_blocks_stops_the_run():
    calls = {"n": 0}

    def cancel_after_timing_started() -> bool:
        calls["n"] += 1
        return calls["n"] > 6

    with pytest.raises(Cancelled):
        run_experiment(
            ExperimentConfig(widths=(8, 4), batch=2, min_time=30.0),
            cancel=cancel_after_timing_started,
        )


def test_cancel_from_another_thread_stops_a_long_measurement():
    stop = threading.Event()
    timer = threading.Timer(0.3, stop.set)
    timer.start()
    with pytest.raises(Cancelled):
        run_experiment(
            ExperimentConfig(widths=(64, 64), batch=8, min_time=60.0), cancel=stop.is_set
        )
    timer.cancel()

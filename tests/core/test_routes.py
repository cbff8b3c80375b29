"""Routes without compiling: config rules, the implicit bf16 route, documents and text."""

import json
import math

import pytest
import torch

from autocast_explorer.core.experiment import compile_forecast, guards
from autocast_explorer.core.experiment.config import ConfigError, ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.interval import SpeedupInterval
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.experiment.route_summary import computes_text
from autocast_explorer.core.experiment.routes import Reference, RouteCall, RouteResult
from autocast_explorer.core.experiment.routes.compiled import compiled_route
from autocast_explorer.core.experiment.routes.implicit import IMPLICIT_BACKENDS, implicit_precision
from autocast_explorer.core.experiment.summary import format_summary
from autocast_explorer.core.hardware.onednn import fpmath_gemms
from autocast_explorer.core.runtime.progress import Reporter
from tests.edits import edited
from tests.schema_check import violations
from tests.steady_clock import steady_timing

TINY = {"widths": (32, 16, 4), "batch": 8, "min_time": 0.02}


def test_routes_are_ordered_checked_and_absent_from_json_by_default():
    assert ExperimentConfig(routes="implicit, eager").routes == ("eager", "implicit")
    assert "routes" not in ExperimentConfig().to_dict()
    config = ExperimentConfig(routes=["eager", "compiled"])
    assert config.to_dict()["routes"] == ["eager", "compiled"]
    assert ExperimentConfig.from_dict(config.to_dict()) == config
    for bad, rule in (
        ("compiled", "must include eager"),
        ("eager,bogus", "must be some of eager, compiled, implicit"),
        ("eager,eager", "each route at most once"),
    ):
        with pytest.raises(ConfigError, match=rule) as caught:
            ExperimentConfig(routes=bad)
        assert caught.value.field == "routes"
    with pytest.raises(ConfigError, match="training mode"):
        ExperimentConfig(routes="eager,implicit", mode="train")


def test_implicit_precision_is_restored_even_when_the_block_raises():
    before = [getattr(torch.backends.mkldnn, op).fp32_precision for op in IMPLICIT_BACKENDS]
    with pytest.raises(RuntimeError, match="inside"), implicit_precision():
        assert torch.backends.mkldnn.matmul.fp32_precision == "bf16"
        assert torch.backends.mkldnn.conv.fp32_precision == "bf16"
        assert torch.backends.mkldnn.rnn.fp32_precision == "bf16"
        raise RuntimeError("inside")
    assert [getattr(torch.backends.mkldnn, op).fp32_precision for op in IMPLICIT_BACKENDS] == before


def test_fpmath_gemms_reads_oneDNN_verbose_lines():
    log = "\n".join(
        [
            "onednn_verbose,v1,primitive,exec,cpu,matmul,brg_matmul:avx10_1_512_amx,undef,"
            "src:f32::blocked:ab::f0 wei:f32::blocked:ba::f0 dst:f32::blocked:ab::f0,"
            "attr-scratchpad:user attr-fpmath:bf16 attr-post-ops:sum,,128x256:256x256,6.77",
            "onednn_verbose,v1,primitive,exec,cpu,matmul,gemm:jit,undef,"
            "src:f32::blocked:ab::f0 wei:f32::blocked:ba::f0 dst:f32::blocked:ab::f0,"
            "attr-scratchpad:user,,128x256:256x10,0.5",
            "onednn_verbose,v1,primitive,exec,cpu,reorder,jit:uni,undef,"
            "src:f32::blocked:ab::f0 dst:f32::blocked:ab::f0,attr-fpmath:bf16,,128x256,0.1",
        ]
    )
    assert fpmath_gemms(log) == (
        ["brg_matmul:avx10_1_512_amx", "gemm:jit"],
        ["brg_matmul:avx10_1_512_amx"],
    )


@pytest.fixture(scope="module")
def implicit_result():
    # Timed on a steady clock: each route's interval cannot lose its pairs to a busy machine.
    with steady_timing():
        return run_experiment(ExperimentConfig(routes=("eager", "implicit"), **TINY))


def test_implicit_route_reports_what_oneDNN_did(implicit_result):
    """Float32 tensors either way; bf16 maths exactly when oneDNN's log shows fpmath bf16
    GEMMs (AMX/AVX-512: yes; AVX2: torch keeps float32 GEMMs and nothing changes)."""
    eager, implicit = implicit_result.routes
    assert (eager.name, implicit.name) == ("eager", "implicit")
    assert torch.backends.mkldnn.matmul.fp32_precision == "none"  # restored after the run
    assert implicit.output_dtype == {"plain": "float32", "lower": "float32"}
    assert implicit.lower_dtype == "bfloat16"
    assert implicit.plain.samples >= 3 and implicit.lower.samples >= 3
    assert implicit.plain_error.identical  # the route's float32 side is eager float32
    assert implicit.error.identical == (not implicit.kernels)
    if implicit.kernels:
        assert "in fpmath mode bf16" in implicit.finding
        assert implicit.error.sqnr_db > 20
    else:
        assert implicit.finding.startswith("the setting changed nothing measurable")
    assert implicit.agreement.rows == 8


def test_eager_route_is_the_engine_s_own_measurement(implicit_result):
    eager = implicit_result.routes[0]
    assert eager.plain == implicit_result.plain
    assert eager.lower == implicit_result.autocast
    assert eager.output_dtype == {"plain": "float32", "lower": "bfloat16"}
    assert eager.agreement.agree == implicit_result.agreement.agree
    assert eager.error.max_abs == pytest.approx(implicit_result.agreement.max_abs_diff)
    assert eager.compile_s is None and eager.graphs is None
    # Its interval is the run's own, so its figure is the run's speedup.
    assert eager.interval == implicit_result.evidence.interval
    assert eager.speedup == implicit_result.speedup


def test_every_timed_route_states_its_speedup_with_its_interval(implicit_result):
    implicit = implicit_result.routes[1]
    interval = implicit.interval
    assert interval is not None and interval.pairs >= 2 and interval.estimate is not None
    assert implicit.speedup == interval.estimate
    assert interval.low <= implicit.speedup <= interval.high
    # Its row says its own call under the run's load: a figure with its interval, a rough
    # one, or no figure at all (this machine's load decides which; each is tested below).
    call = implicit_result.route_call(implicit)
    said = implicit.speedup_text(call)
    if call.graded and not call.rough:
        assert said == call.figure_text() + call.interval_text(slower=call.kind == "slower")
    elif not call.graded:
        assert said in ("can't tell", "too noisy to tell")
    lines = format_summary(implicit_result).splitlines()
    assert any(line.startswith("    implicit: ") and said in line for line in lines)


def test_a_route_row_says_its_own_call():
    from autocast_explorer.core.experiment.timing import LatencyStats
    from autocast_explorer.core.hardware.load import MachineLoad

    def stats(ms: float) -> LatencyStats:
        return LatencyStats.from_times([ms] * 5, cold_ms=ms, block_size=1)

    def route(plain_ms, lower_ms, band):
        low, high = band
        interval = SpeedupInterval(
            low=low, high=high, level=0.95, pairs=24, estimate=plain_ms / lower_ms
        )
        return RouteResult(
            name="compiled",
            lower_dtype="bfloat16",
            plain=stats(plain_ms),
            lower=stats(lower_ms),
            interval=interval,
        )

    assert route(1.72, 1.0, (1.66, 1.79)).speedup_text() == "1.72× faster (95%: 1.66–1.79)"
    assert route(0.71, 1.0, (0.5, 1.2)).speedup_text() == "too noisy to tell"  # no bare 0.71×
    no_interval = edited(route(0.71, 1.0, (0.5, 1.2)), interval=None)
    assert no_interval.speedup_text() == "too noisy to tell"
    busy = MachineLoad(wall_s=2.0, cores=2, other_cpu_s=4.0)
    slow = route(0.1, 1.0, (0.095, 0.105))
    assert slow.speedup_text(slow.call_under(busy)) == "about 10× slower · the machine was busy"
    verdicts = [r.under(busy, None).verdict for r in (slow, route(1.2, 1.0, (1.15, 1.25)))]
    assert [v.call if v else None for v in verdicts] == ["slower", "too noisy"]


def test_a_route_without_an_interval_states_no_figure(implicit_result):
    # Written before routes had intervals: nothing to judge its ratio by, so no bare figure.
    data = json.loads(implicit_result.to_json())
    del data["routes"][1]["speedup_interval"]
    old = ExperimentResult.from_dict(data).routes[1]
    assert old.interval is None and old.speedup_text() == "too noisy to tell"
    assert old.speedup == old.plain.median_ms / old.lower.median_ms


def test_routes_round_trip_through_json_and_match_the_schema(implicit_result):
    text = implicit_result.to_json()
    data = json.loads(text)
    assert [r["name"] for r in data["routes"]] == ["eager", "implicit"]
    assert data["config"]["routes"] == ["eager", "implicit"]
    assert violations(data) == []
    again = ExperimentResult.from_json(text)
    assert again.routes[1].kernels == implicit_result.routes[1].kernels
    assert again.routes[1].plain.median_ms == implicit_result.routes[1].plain.median_ms
    assert again.routes[1].finding == implicit_result.routes[1].finding
    assert again.routes[1].interval == implicit_result.routes[1].interval
    # A result written before routes existed loads with none.
    del data["routes"], data["config"]["routes"]
    old = ExperimentResult.from_dict(data)
    assert old.routes == () and old.config.routes == ("eager",)


def test_a_bad_route_entry_is_refused_with_its_path(implicit_result):
    data = json.loads(implicit_result.to_json())
    data["routes"][1]["recompiles"] = -1
    with pytest.raises(ValueError, match=r"routes\[1\]\.recompiles"):
        ExperimentResult.from_dict(data)


def test_summary_lists_every_route_with_its_finding(implicit_result):
    text = format_summary(implicit_result)
    assert "Routes (median ms per forward" in text
    implicit = implicit_result.routes[1]
    row = next(line for line in text.splitlines() if line.startswith("  implicit "))
    assert f"{implicit.plain.median_ms:.3f}" in row
    # What the lower side ran: bf16 maths only where oneDNN's log showed a GEMM in it.
    ran = "fp32_precision=bf16 (bfloat16)" if implicit.kernels else "float32 "
    assert ran in row and computes_text(implicit).startswith(ran.strip())
    assert f"    implicit: {implicit.finding}" in text


def test_compile_guard_refuses_a_forecast_over_the_limit(monkeypatch):
    """Nothing is compiled: the forecast alone refuses, as a finding of the route."""
    monkeypatch.setattr(compile_forecast, "_COMPILE_SCALE", [])
    assert guards.check_compile(5) is None  # nothing compiled yet: no basis
    # A cold compile is forecast at 4 s + 0.85 s per leaf module: 8.25 s for 5 leaves.
    guards.record_compile(8.25 * 8, 5)  # 8× the cold forecast
    guards.record_compile(7.4 * 10, 4)  # slower (10×): the fastest is kept
    assert guards.estimate_compile(3) == pytest.approx(8 * 6.55)
    with pytest.raises(guards.GuardError, match="compiling is estimated at 127 s"):
        guards.check_compile(14)  # 8 × (4 + 0.85 · 14) = 127.2 s
    assert guards.check_compile(14, allow_slow=True) == pytest.approx(127.2)
    model = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(14)])
    x = torch.randn(2, 4)
    with torch.no_grad():
        reference = Reference(model(x), 0.05, 1e-5, 2)
        route = compiled_route(RouteCall(model, x, torch.bfloat16, reference, 0.01, Reporter()))
    assert route.plain is None and route.lower is None and route.compile_s is None
    assert route.finding.startswith("not compiled: compiling is estimated at 127 s")
    assert not math.isfinite(route.speedup)


def test_report_has_a_routes_section(implicit_result):
    from autocast_explorer.core.reports.report import report_markdown

    text = report_markdown(implicit_result)
    assert "## Routes" in text
    implicit = implicit_result.routes[1]
    row = next(line for line in text.splitlines() if line.startswith("| implicit |"))
    assert f"| {implicit.plain.median_ms:.4g} |" in row
    assert f"| {computes_text(implicit)} | float32 |" in row

"""Sweeps: planning, guards up front, streaming, cancellation, per-point budget, grid."""

import json

import pytest
import torch

from autocast_explorer.core.experiment.certainty import SWEEP_TARGET
from autocast_explorer.core.experiment.config import ConfigError, ExperimentConfig
from autocast_explorer.core.experiment.guards import GuardError
from autocast_explorer.core.experiment.model import build
from autocast_explorer.core.experiment.timing import LatencyStats
from autocast_explorer.core.runtime.progress import Cancelled
from autocast_explorer.core.sweeps import runner as sweep
from autocast_explorer.core.sweeps.crossover import crossovers
from autocast_explorer.core.sweeps.points import PointLatency
from autocast_explorer.core.sweeps.result import SweepPoint, SweepResult
from autocast_explorer.core.sweeps.runner import run_grid, run_sweep
from autocast_explorer.core.sweeps.spec import (
    SweepSpec,
    default_values,
    log_spaced,
    parse_values,
    point_config,
)
from autocast_explorer.core.sweeps.verdict import measured_clause
from tests.steady_rate import steady_rates

TINY = ExperimentConfig(widths=(32, 16, 16, 4), batch=4, min_time=0.02)


# ---- planning (no torch work) ---------------------------------------------------------------
def test_log_spaced_defaults():
    assert default_values("batch") == tuple(2**i for i in range(12))  # 1 … 2048
    assert default_values("width") == (64, 128, 256, 512, 1024, 2048, 4096)
    assert log_spaced(1, 1000, 4) == (1, 10, 100, 1000)
    assert log_spaced(1, 3, 10) == (1, 2, 3)  # rounding duplicates dropped
    assert log_spaced(5, 5, 3) == (5,)


def test_parse_values():
    assert parse_values("1, 8,64,512") == (1, 8, 64, 512)
    assert parse_values("1:2048:12") == default_values("batch")
    for text, message in [
        ("", "enter comma-separated values"),
        ("1,,8", "empty entry"),
        ("1,x", "'x' is not a whole number"),
        ("1:8", "a range is LOW:HIGH:COUNT"),
        ("8:1:3", "need 1 ≤ low ≤ high"),
        ("1:8:0", "at least 1 point"),
    ]:
        with pytest.raises(ConfigError, match=message) as info:
            parse_values(text)
        assert info.value.field == "values"


def test_spec_sorts_dedupes_and_validates():
    assert SweepSpec("batch", (64, 1, 8, 8)).values == (1, 8, 64)
    with pytest.raises(ConfigError, match="must be one of batch, width"):
        SweepSpec("depth", (1,))
    with pytest.raises(ConfigError, match="needs at least one value"):
        SweepSpec("batch", ())
    with pytest.raises(ConfigError, match="0 must be a whole number ≥ 1"):
        SweepSpec("batch", (0, 4))
    with pytest.raises(ConfigError, match="at most 64 points"):
        SweepSpec("batch", tuple(range(1, 66)))
    with pytest.raises(ConfigError, match="more than 256"):
        SweepSpec("batch", tuple(range(1, 20)), tuple(range(1, 20)))


def test_width_sweep_sets_every_hidden_width_and_keeps_input_and_classes():
    assert point_config(TINY, "width", 100).widths == (32, 100, 100, 4)
    assert point_config(TINY, "batch", 7).batch == 7
    with pytest.raises(ConfigError, match="width 64: a width sweep needs at least one hidden"):
        point_config(TINY.replace(widths=(32, 4)), "width", 64)
    with pytest.raises(ConfigError, match="batch 0"):
        point_config(TINY, "batch", 0)


def test_grid_plan_is_row_by_row():
    plan = SweepSpec("batch", (1, 8), (16, 64)).plan(TINY)
    assert [(p.index, p.value, p.value2) for p in plan] == [
        (0, 1, 16),
        (1, 8, 16),
        (2, 1, 64),
        (3, 8, 64),
    ]
    assert plan[3].config.widths == (32, 64, 64, 4) and plan[3].config.batch == 8
    assert plan[3].name == "batch 8 × width 64"


# ---- guards, before anything is built -------------------------------------------------------
def test_memory_guard_refuses_the_sweep_up_front_naming_the_value(monkeypatch):
    built = []
    monkeypatch.setattr(sweep, "build_model", lambda c: built.append(c))
    config = TINY.replace(widths=(4096, 4096, 10), memory_budget_mb=512)
    with pytest.raises(GuardError) as info:
        run_sweep(config, "batch", [1, 8, 100_000])
    assert info.value.field == "memory"
    assert str(info.value).startswith("memory: batch 100000: this model needs about")
    assert built == []


def test_time_guard_refuses_the_sweep_up_front(monkeypatch):
    built = []
    monkeypatch.setattr(sweep, "build_model", lambda c: built.append(c))
    config = TINY.replace(batch=1024, memory_budget_mb=1e6)
    with steady_rates(1e9), pytest.raises(GuardError) as info:
        run_sweep(config, "width", [64, 8192])
    assert info.value.field == "time"
    assert "width 8192: one forward pass is estimated at" in str(info.value)
    assert built == []


# ---- measuring ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def streamed():
    """A live sweep whose blocks are timed steadily (the tester's kit): what each point says
    then does not depend on how busy the machine is."""
    from autocast_explorer.testing.noise import TimingNoise

    points, messages = [], []
    patch = pytest.MonkeyPatch()
    TimingNoise(patch).clear(1.0)
    try:
        result = run_sweep(
            TINY,
            "batch",
            [16, 1, 4],
            progress=lambda f, m: messages.append((f, m)),
            on_point=points.append,
        )
    finally:
        patch.undo()
    return result, points, messages


def test_points_stream_in_order_as_they_complete(streamed):
    result, points, _ = streamed
    assert [p.value for p in points] == [1, 4, 16]
    assert tuple(points) == result.points
    assert [p.batch for p in points] == [1, 4, 16]
    assert all(p.widths == (32, 16, 16, 4) for p in points)
    for p in points:
        # The median paired ratio, inside the point's interval (or the ratio of medians
        # for a point that paired fewer than two rounds).
        if p.interval is None:
            assert p.speedup == pytest.approx(p.plain.median_ms / p.autocast.median_ms)
        else:
            assert p.speedup == p.interval.estimate
            assert p.interval.low <= p.speedup <= p.interval.high
        assert p.flops == 2 * p.batch * (32 * 16 + 16 * 16 + 16 * 4)


def test_each_point_records_the_input_it_fed(streamed):
    result, points, _ = streamed
    assert [p.input.shape for p in points] == [(1, 32), (4, 32), (16, 32)]
    assert {(p.input.kind, p.input.name, p.input.dtype) for p in points} == {
        ("float", "input", "float32")
    }
    written = json.loads(result.to_json())
    assert [p["input"]["shape"] for p in written["points"]] == [[1, 32], [4, 32], [16, 32]]
    assert SweepResult.from_json(result.to_json()) == result
    # A file written before points recorded their input still reads.
    for point in written["points"]:
        del point["input"]
    assert all(p.input is None for p in SweepResult.from_json(json.dumps(written)).points)


def test_progress_names_the_point_and_the_time_left(streamed):
    _, _, messages = streamed
    fractions = [f for f, _ in messages]
    assert fractions == sorted(fractions)
    assert fractions[-1] == 1.0
    texts = [m for _, m in messages]
    assert any(
        m.startswith("point 2/3 · batch 4 · timing float32 vs bfloat16 · about") for m in texts
    )
    assert all(m.endswith("left") for m in texts if m.startswith("point "))


def test_each_point_stops_when_precise_or_at_its_budget(streamed):
    result, _, _ = streamed
    for p in result.points:
        # Adaptive: a point stops once its interval is within ±3% at 95%, else at its budget
        # (min_time split between the two modes; the fixed protocol is tested on a fake clock).
        ev = p.evidence
        if ev.stopped == "precise":
            assert ev.interval.half_width <= SWEEP_TARGET and ev.interval.level >= 0.95
        else:
            assert ev.stopped == "max_time"
        assert p.plain.samples >= 3 and p.autocast.samples >= 3


def test_sweep_result_carries_verdict_roofline_and_crossover(streamed):
    result, _, _ = streamed
    assert result.param == "batch"
    assert result.values == (1, 4, 16)
    expected = crossovers([1, 4, 16], [p.speedup for p in result.points])
    assert result.crossover == (tuple(expected) or None)
    assert result.verdict.sentence.endswith(".")
    assert result.verdict.threads == torch.get_num_threads()
    assert len(result.roofline.points) == 2 * 3
    assert {p.dtype for p in result.roofline.peaks.values()} == {"float32", "bfloat16"}
    assert result.verdict.onednn is not None and result.verdict.onednn.captured


def test_cancel_between_points():
    points = []
    stop = []

    def on_point(p):
        points.append(p)
        stop.append(True)

    with pytest.raises(Cancelled):
        run_sweep(TINY, "batch", [1, 2, 4], cancel=lambda: bool(stop), on_point=on_point)
    assert [p.value for p in points] == [1]


def test_cancel_between_timing_blocks_of_a_point():
    points, seen = [], []

    def progress(fraction, message):
        seen.append(message)

    def cancel():
        return any("timing" in m for m in seen)

    with pytest.raises(Cancelled):
        run_sweep(TINY, "batch", [1, 2], progress=progress, cancel=cancel, on_point=points.append)
    assert points == []


def test_points_sharing_widths_match_single_runs():
    # Built once, input redrawn from the RNG state after the model: identical to build().
    models = sweep._Models()
    for batch in (3, 5):
        config = TINY.replace(batch=batch)
        model, x = models.get(config)
        ref_model, ref_x = build(config)
        assert torch.equal(x, ref_x)
        with torch.no_grad():
            assert torch.equal(model(x), ref_model(ref_x))


def test_width_sweep_measures_each_width():
    result = run_sweep(TINY, "width", [8, 24], probe_onednn=False)
    assert [p.widths for p in result.points] == [(32, 8, 8, 4), (32, 24, 24, 4)]
    assert [p.batch for p in result.points] == [4, 4]
    assert result.verdict.onednn is None
    # A point too noisy to tell gives the verdict no speedup (NaN), and is counted as such.
    speedups = sweep.told_speedups(result.points)
    noisy = sum(p.call.too_noisy for p in result.points)
    assert result.verdict.measured == measured_clause("width", [8, 24], speedups, noisy)


def test_grid_streams_row_by_row_and_fills_the_matrix():
    points = []
    result = run_grid(TINY, [1, 8], [16, 32], on_point=points.append, probe_onednn=False)
    assert [(p.value, p.value2) for p in points] == [(1, 16), (8, 16), (1, 32), (8, 32)]
    assert result.param == "batch,width"
    matrix = result.speedup_matrix()
    assert matrix[1][0] == points[2].speedup and matrix[0][1] == points[1].speedup
    assert [r.width for r in result.grid_rows] == [16, 32]
    assert "(the widest row)" in result.verdict.sentence
    # A grid's crossover is one entry per width (the file's form), None when no row crosses.
    rows = tuple({"width": r.width, "values": r.crossovers or None} for r in result.grid_rows)
    assert result.crossover == (rows if any(r.crossovers for r in result.grid_rows) else None)


def test_stalled_points_are_those_far_slower_than_expected():
    def point(batch, ms, widths=(256, 256, 10)):
        stats = LatencyStats.from_times([ms], cold_ms=ms, block_size=1)
        return SweepPoint(
            index=0,
            value=batch,
            batch=batch,
            widths=widths,
            dtype="bfloat16",
            latency=PointLatency.of(stats, stats, None),
        )

    # Expected time: max(FLOP estimate, bytes moved / 5 GB/s, 0.2 ms); flagged above 20× it.
    tiny = point(1, 0.05)
    stalled = point(1, 25.0)  # what a 0.05 ms forward takes when threads wait for a busy core
    big = point(4096, 30.0)  # FLOP estimate 2.8 ms → flagged only above 56 ms
    assert sweep.stalled_points([tiny, stalled, big], [1e-6, 1e-6, 0.0028]) == [1]
    # Memory-bound: 4096-wide weights at batch 1 move ~270 MB under autocast → 54 ms expected.
    wide = point(1, 60.0, widths=(4096, 4096, 4096, 10))
    assert wide.bytes_autocast > 250e6
    assert sweep.stalled_points([wide], [0.0002]) == []
    assert sweep.stalled_points([point(1, 3.9)], [1e-6]) == []  # under 20 × 0.2 ms
    assert sweep.stalled_points([point(1, 4.1)], [1e-6]) == [0]


def test_a_stalled_point_becomes_a_warning(monkeypatch):
    seen = []

    def fake(points, estimates):
        seen.append((len(points), len(estimates)))
        return [0]

    monkeypatch.setattr(sweep, "stalled_points", fake)
    result = run_sweep(TINY, "batch", [1, 2], probe_onednn=False)
    assert seen == [(2, 2)]
    assert result.warnings[0].startswith(
        "1 of 2 points ran over 20× slower than this CPU's calibrated rate predicts (batch 1): "
        "another program is probably competing for the cores"
    )


def test_mostly_doubtful_points_make_the_verdict_provisional(monkeypatch):
    monkeypatch.setattr(sweep, "stalled_points", lambda points, estimates: [0, 1])
    result = run_sweep(TINY, "batch", [1, 2, 4], probe_onednn=False)
    assert result.verdict.sentence.endswith(
        "points were noisy or slowed by other programs: provisional, see the warnings."
    )
    assert "2 of 3 points" in result.verdict.sentence or "3 of 3 points" in result.verdict.sentence


@pytest.mark.parametrize("adaptive", [True, False])
def test_adaptive_points_share_the_sweeps_budget_by_what_is_left(monkeypatch, adaptive):
    # Three points of a 0.02 s budget; the adaptive sweep's is 0.45 × 3 × 0.02 = 0.027 s. Their
    # timing (cold calls included) took 0.001, 0.002 and 0.020 s. With a 95% interval a point
    # may use its own 0.02 s and borrow what earlier ones left while the sweep stays within
    # 0.027 s (its cap), and gives up, once ±3% is out of reach, at its even share of what is
    # left of 0.027 s; without one it may go on to its own budget and as much again of what
    # earlier points left (its maximum time). A fixed sweep gives each its budget, no target.
    allowances = []
    real = sweep.measure_paired

    def recording(*args, **kwargs):
        budget = kwargs["budget"]
        limits = (budget.cap, budget.give_up_after) if budget is not None else (None, None)
        allowances.append((args[1], kwargs["max_time"], *limits))
        return real(*args, **kwargs)

    monkeypatch.setattr(sweep, "measure_paired", recording)
    # The clock the runner reads around each point's timing: scripted instants.
    monkeypatch.setattr(sweep, "_now", iter([0, 0.001, 1, 1.002, 2, 2.020]).__next__)
    result = run_sweep(TINY, "batch", [1, 2, 4], probe_onednn=False, adaptive=adaptive)
    assert len(result.points) == 3
    if adaptive:
        # Per mode, halves of each point's allowance: minimum, maximum, cap, even share.
        assert allowances == [
            pytest.approx((0.001, 0.02 / 2, 0.02 / 2, 0.027 / 3 / 2)),
            pytest.approx((0.001, (0.02 + 0.019) / 2, (0.02 + 0.006) / 2, 0.026 / 2 / 2)),
            pytest.approx((0.001, 2 * 0.02 / 2, (0.02 + 0.004) / 2, 0.024 / 2)),
        ]
    else:
        assert allowances == [(0.01, 0.01, None, None)] * 3

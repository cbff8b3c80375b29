"""Knowing when a difference is real, on a fake clock: the interval of the paired speedup,
the "can't tell" / "too noisy to tell" rule, stalled blocks and adaptive stopping. No timing is
asserted anywhere: every block's duration is scripted."""

import contextlib
import itertools
import math

import pytest

from autocast_explorer.core.experiment import timing
from autocast_explorer.core.experiment.certainty import (
    NOISY_WIDTH,
    RUN_TARGET,
    STALL_SHARE,
    TimingEvidence,
    judge,
)
from autocast_explorer.core.experiment.interval import (
    LEVEL,
    SpeedupInterval,
    median_interval,
    paired_ratios,
)
from autocast_explorer.core.hardware.load import LoadMeter, MachineLoad
from tests.edits import edited, retimed


class FakeClock:
    """Seconds that only move when a scripted forward runs."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def scripted(clock: FakeClock, durations) -> callable:
    """A forward whose n-th call takes the n-th of `durations` (an iterator) seconds."""

    def fn() -> None:
        clock.now += next(durations)

    return fn


# ---- the interval ------------------------------------------------------------------------------
def test_order_statistic_interval_uses_the_binomial_ranks():
    # n = 20: the 95% interval of the median is [x(6), x(15)] (coverage 95.9%).
    ratios = [1.0 + k / 100 for k in range(20)]  # 1.00 … 1.19, shuffled order must not matter
    interval = median_interval(list(reversed(ratios)))
    assert (interval.low, interval.high) == (pytest.approx(1.05), pytest.approx(1.14))
    assert interval.level == LEVEL and interval.pairs == 20
    assert interval.estimate == pytest.approx(1.095)  # between x(10) and x(11)
    # n = 10: [x(2), x(9)].
    interval = median_interval([float(k) for k in range(1, 11)])
    assert (interval.low, interval.high) == (2.0, 9.0)
    assert median_interval([3.0, 1.0, 2.0]).estimate == 2.0


def test_the_stated_speedup_is_the_paired_estimate_inside_its_interval():
    # The GRU preset once read "2.27× slower (95%: 2.03–2.23)": the ratio of the two modes'
    # medians fell outside the interval of the paired ratios. The figure is now the paired one.
    from autocast_explorer.core.experiment.certainty import speedup_basis, speedup_figure
    from autocast_explorer.core.experiment.interval import speedup_interval

    # The machine slowed 3× between round 5's plain and autocast blocks: each mode's median
    # comes from a different regime, while every round but that one still says 0.5.
    plain = [10.0, 10.0, 10.0, 10.0, 10.0, 30.0, 30.0, 30.0, 30.0]
    auto = [20.0, 20.0, 20.0, 20.0, 60.0, 60.0, 60.0, 60.0, 60.0]
    ratios = paired_ratios(plain, auto)
    ev = TimingEvidence(interval=speedup_interval(ratios), stopped="precise", target=0.05)
    ratio_of_medians = 10.0 / 60.0
    # The odd round is trimmed away: the interval is that of the other eight, exactly 0.5.
    assert (ev.interval.low, ev.interval.high) == (pytest.approx(0.5), pytest.approx(0.5))
    figure = speedup_figure(10.0, 60.0, ev)
    assert figure == pytest.approx(0.5)
    assert ev.interval.low <= figure <= ev.interval.high
    assert speedup_basis(ev) == "20%-trimmed geometric mean of 9 paired rounds' float32 ÷ autocast"
    few = TimingEvidence(interval=speedup_interval(ratios[:4]), stopped="max_time")
    assert speedup_basis(few) == "median of 4 paired rounds' float32 ÷ autocast"
    # A file written before the estimate was kept: the ratio of medians, said so.
    old = TimingEvidence(
        interval=SpeedupInterval(low=0.5, high=0.5, level=0.96, pairs=9), stopped="precise"
    )
    assert speedup_figure(10.0, 60.0, old) == ratio_of_medians
    assert speedup_basis(old) == speedup_basis(None) == "plain median ÷ autocast median"
    assert math.isnan(speedup_figure(30.0, None, ev))


def test_the_speedup_interval_is_yuens_for_the_trimmed_mean_of_the_log_ratios():
    from autocast_explorer.core.experiment.interval import speedup_interval, t_quantile

    # n = 10 ratios: 2 cut at each end (20%), 6 kept; the winsorized logs give the variance.
    ratios = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 5.0]
    logs = sorted(math.log(r) for r in ratios)
    kept = logs[2:8]
    mean = sum(kept) / 6
    wins = [logs[2]] * 2 + kept + [logs[7]] * 2
    var = sum((x - sum(wins) / 10) ** 2 for x in wins) / 9
    half = t_quantile(0.975, 5) * math.sqrt(9 * var / (6 * 5))
    interval = speedup_interval(list(reversed(ratios)))
    assert interval.estimate == pytest.approx(math.exp(mean))
    assert (interval.low, interval.high) == (
        pytest.approx(math.exp(mean - half)),
        pytest.approx(math.exp(mean + half)),
    )
    assert interval.level == LEVEL and interval.pairs == 10
    # The one far-off pair (5.0) does not move it: the same as with 1.9 there.
    assert speedup_interval([*ratios[:9], 1.9]) == interval
    # Below MIN_PAIRS_95 pairs: [min, max] at the coverage it has, the median as its estimate.
    few = speedup_interval([1.2, 0.9, 1.0])
    assert (few.low, few.high, few.estimate) == (0.9, 1.2, 1.0)
    assert few.level == pytest.approx(0.75)
    assert speedup_interval([1.0]) is None


def test_t_quantiles_match_the_tables():
    from autocast_explorer.core.experiment.interval import t_quantile

    for df, table in ((3, 3.182), (5, 2.571), (10, 2.228), (30, 2.042), (1000, 1.962)):
        assert t_quantile(0.975, df) == pytest.approx(table, rel=2e-3)


def test_few_pairs_give_min_to_max_at_the_coverage_they_have():
    interval = median_interval([1.2, 0.9, 1.0])
    assert (interval.low, interval.high) == (0.9, 1.2)
    assert interval.level == pytest.approx(0.75)  # 1 − 2 · 0.5³
    assert median_interval([1.0]) is None
    assert median_interval([]) is None


def test_paired_ratios_are_plain_over_autocast_per_round():
    assert paired_ratios([2.0, 3.0, 0.0], [1.0, 2.0, 1.0]) == [2.0, 1.5]  # the 0 ms pair skipped


def test_interval_half_width_and_words():
    interval = SpeedupInterval(low=1.66, high=1.79, level=0.95, pairs=30)
    assert interval.half_width == pytest.approx(math.sqrt(1.79 / 1.66) - 1)
    assert interval.text() == "95%: 1.66–1.79"
    assert SpeedupInterval(low=0.5, high=0.8, level=0.95, pairs=9).slower_text() == "95%: 1.25–2.00"


# ---- the call ------------------------------------------------------------------------------
def evidence(low, high, **extra) -> TimingEvidence:
    return TimingEvidence(
        interval=SpeedupInterval(low=low, high=high, level=LEVEL, pairs=30), **extra
    )


@pytest.mark.parametrize(
    ("speedup", "low", "high", "kind"),
    [
        (1.72, 1.66, 1.79, "faster"),
        (0.70, 0.68, 0.72, "slower"),
        (1.00, 0.97, 1.03, "same"),
        (1.06, 1.02, 1.10, "unclear"),  # straddles the edge of "about the same" (1.05)
        (0.96, 0.93, 0.99, "unclear"),
        (1.70, 0.50, 3.10, "noisy"),  # wider than NOISY_WIDTH
        (3.00, 1.66, 1.79, "noisy"),  # the medians' ratio lies far outside the interval
    ],
)
def test_the_call_follows_the_whole_interval(speedup, low, high, kind):
    call = judge(speedup, evidence(low, high))
    assert call.kind == kind
    assert call.graded is (kind in ("faster", "slower", "same"))


def test_too_noisy_names_its_measured_reasons_and_what_helps():
    load = MachineLoad(wall_s=2.0, cores=2, other_cpu_s=2.6)
    stalls = tuple(timing.Stall(mode="float32", round=k, ms=40.0, median_ms=1.0) for k in range(4))
    ev = evidence(0.5, 3.1, stalls=stalls, load=load, stopped="max_time", blocks=26)
    call = judge(1.7, ev, threads=2, iqr_ratios=(0.68, 0.05))
    assert call.kind == "noisy" and not call.graded
    reasons = " | ".join(call.reasons)
    assert f"spans a factor of {3.1 / 0.5:.2f} (over {NOISY_WIDTH:g})" in reasons
    assert "other programs used 1.3 of 2 cores" in reasons
    assert "4 of 30 timed blocks stalled" in reasons
    assert "IQR of 68%" in reasons
    assert call.advice == (
        "fewer threads than cores (1 here)",
        "closing other programs",
        "a longer maximum time",
    )


@pytest.mark.parametrize(
    ("stalled", "kept", "kind"),
    [(0, 40, "faster"), (10, 40, "faster"), (11, 40, "noisy"), (121, 60, "noisy")],
)
def test_a_run_whose_blocks_stalled_throughout_is_too_noisy(stalled, kept, kind):
    """A tight interval between disturbances is no evidence (measured: 121 stalls, 1.21–1.37
    where the quiet run is 0.65×): over STALL_SHARE of the blocks stalled means noisy."""
    stalls = tuple(
        timing.Stall(mode="float32", round=k, ms=40.0, median_ms=1.0) for k in range(stalled)
    )
    call = judge(1.3, evidence(1.21, 1.37, stalls=stalls, blocks=kept), threads=1)
    assert stalled / (stalled + kept) > STALL_SHARE or kind == "faster"
    assert call.kind == kind
    if kind == "noisy":
        assert f"{stalled} of {stalled + kept} timed blocks stalled" in " | ".join(call.reasons)


@pytest.mark.parametrize(
    ("threads", "other_cores", "kind"),
    [
        (2, 0.1, "faster"),  # a quiet machine
        (2, 0.5, "noisy"),  # other programs took half a core the run's 2 threads needed
        (1, 0.5, "faster"),  # the second core was free for them
        (1, 1.3, "noisy"),  # more than the free core
        (None, 0.3, "noisy"),  # torch's default: every core
    ],
)
def test_other_programs_on_the_runs_cores_make_it_too_noisy(threads, other_cores, kind):
    load = MachineLoad(wall_s=2.0, cores=2, other_cpu_s=2.0 * other_cores)
    call = judge(1.72, evidence(1.66, 1.79, load=load, blocks=40), threads=threads)
    assert call.kind == kind
    if kind == "noisy":
        assert f"other programs used {other_cores:.1f} of 2 cores" in " | ".join(call.reasons)


def test_no_interval_at_all_is_too_noisy_and_old_results_keep_their_pace():
    assert judge(1.5, TimingEvidence(interval=None)).kind == "noisy"
    assert judge(1.5, None).kind == "faster"  # saved before intervals: called as before
    assert judge(1.01, None).kind == "same"
    assert judge(math.nan, evidence(1, 1.1)).kind == "untimed"


def test_evidence_round_trips_through_its_json_keys():
    from autocast_explorer.core.documents.model import dump, read

    ev = evidence(
        1.1,
        1.2,
        stalls=(timing.Stall(mode="bfloat16", round=3, ms=9.0, median_ms=1.5),),
        load=MachineLoad(
            wall_s=1.5,
            cores=2,
            other_cpu_s=None,
            freq_start_mhz=(2600.0, 2600.0),
            freq_end_mhz=None,
        ),
        stopped="precise",
        target=0.05,
        blocks=40,
    )
    data = dump(ev)
    assert data["speedup_interval"] == {"low": 1.1, "high": 1.2, "level": LEVEL, "pairs": 30}
    assert data["stalls"] == [{"mode": "bfloat16", "round": 3, "ms": 9.0, "median_ms": 1.5}]
    assert TimingEvidence.from_section(read(TimingEvidence, data)) == ev
    assert TimingEvidence.from_section(read(TimingEvidence, {})) is None  # an older file
    with pytest.raises(ValueError, match="high"):
        read(TimingEvidence, {**data, "speedup_interval": {"low": 2, "high": 1, "level": 0.9}})


# ---- the protocol on a fake clock -----------------------------------------------------------
def test_a_stalled_block_is_recorded_left_out_and_re_measured():
    clock = FakeClock()
    # float32 1 ms per call, autocast 0.5 ms: a steady speedup of 2.0 ...
    plain_times = itertools.chain([0.001] * 40, [0.05] * 10, itertools.repeat(0.001))
    # ... except ten float32 calls that take 50 ms (another program held the core).
    plain = scripted(clock, plain_times)
    auto = scripted(clock, itertools.repeat(0.0005))
    result = timing.measure_paired([plain, auto], 0.1, labels=["float32", "bfloat16"], clock=clock)
    assert result.stalls, "the 50× slower block must be caught"
    stall = result.stalls[0]
    assert stall.mode == "float32" and stall.ms > timing.STALL_FACTOR * stall.median_ms
    plain_stats = result.stats[0]
    assert max(plain_stats.times_ms) == pytest.approx(1.0)  # left out of the statistics
    # Re-measured: the budget still holds kept blocks only.
    kept = sum(plain_stats.times_ms) * plain_stats.block_size / 1e3 + plain_stats.cold_ms / 1e3
    assert kept >= 0.1 - 1e-9 or plain_stats.samples >= timing.MIN_BLOCKS
    assert result.interval.low == pytest.approx(2.0) and result.interval.high == pytest.approx(2.0)


def test_a_steady_pair_stops_as_soon_as_the_interval_is_precise():
    clock = FakeClock()
    plain = scripted(clock, itertools.repeat(0.002))
    auto = scripted(clock, itertools.repeat(0.001))
    result = timing.measure_paired(
        [plain, auto], 0.05, max_time=1.0, target=RUN_TARGET, clock=clock
    )
    assert result.stopped == "precise"
    assert result.interval.low == pytest.approx(2.0) and result.interval.level == LEVEL
    assert clock.now < 2 * 0.05 + 0.05  # nowhere near the 1 s allowed per mode
    assert result.interval_between(0, 1) == result.interval  # every round kept both blocks
    assert len(result.rounds_ms) == result.rounds


def test_any_two_modes_get_the_interval_of_their_paired_rounds():
    # Three modes (as placements time float32 and its placements): each pair of modes has
    # its own interval from the rounds where both kept a block.
    clock = FakeClock()
    modes = [scripted(clock, itertools.repeat(ms)) for ms in (0.003, 0.002, 0.001)]
    result = timing.measure_paired(modes, 0.03, max_time=math.inf, clock=clock)
    assert result.interval is None  # only two modes have one headline interval
    assert result.interval_between(0, 1).estimate == pytest.approx(1.5)
    assert result.interval_between(0, 2).estimate == pytest.approx(3.0)
    assert result.interval_between(2, 1).estimate == pytest.approx(0.5)
    assert result.interval_between(0, 2).pairs == sum(
        1 for r in result.rounds_ms if r[0] is not None and r[2] is not None
    )


def test_a_noisy_pair_runs_to_its_maximum_time_and_no_further():
    clock = FakeClock()
    # autocast's blocks alternate 0.75 and 1.25 ms per call (below the stall factor): the
    # pairs' ratios alternate 1.33 and 0.8, and the interval never gets within ±5%.
    factor = [1.25]

    @contextlib.contextmanager
    def alternate():
        factor[0] = 2.0 - factor[0]
        yield

    plain = scripted(clock, itertools.repeat(0.001))

    def auto():
        clock.now += 0.001 * factor[0]

    result = timing.measure_paired(
        [plain, auto],
        0.02,
        max_time=0.1,
        target=RUN_TARGET,
        clock=clock,
        block_contexts=[None, alternate],
    )
    assert result.stopped == "max_time"
    assert result.interval.half_width > RUN_TARGET
    # Bounded: both modes together spent about 2 × max_time (plus one round past it).
    assert clock.now <= 2 * 0.1 + 0.01


def test_the_fixed_protocol_reports_budget_and_has_no_target():
    clock = FakeClock()
    plain = scripted(clock, itertools.repeat(0.001))
    auto = scripted(clock, itertools.repeat(0.001))
    result = timing.measure_paired([plain, auto], 0.02, clock=clock)
    assert result.stopped == "budget" and result.target is None
    assert result.interval.low == pytest.approx(1.0)


def test_the_load_meter_subtracts_our_own_cpu_time():
    busy = iter([100.0, 104.0])  # all cores: 4 CPU-seconds busy over the span
    own = iter([10.0, 11.5])  # of which 1.5 were ours
    wall = iter([0.0, 2.0])
    meter = LoadMeter(
        busy=lambda: next(busy),
        own=lambda: next(own),
        freq=lambda: (1200.0, 3400.0),
        wall=lambda: next(wall),
        cores=2,
    )
    load = meter.stop()
    assert load.other_cpu_s == pytest.approx(2.5)
    assert load.other_cores == pytest.approx(1.25)
    assert load.busy_text() == "other programs used 1.2 of 2 cores"
    assert load.freq_changed and "between 1200 and 3400 MHz" in load.freq_text()


def test_without_proc_the_load_claims_nothing():
    meter = LoadMeter(busy=lambda: None, own=lambda: 1.0, freq=lambda: None, cores=4)
    load = meter.stop()
    assert load.other_cpu_s is None and load.other_cores is None and load.busy_text() == ""
    assert not load.freq_changed
    assert load.to_dict()["cores"] == 4


# ---- every place the speedup is stated ------------------------------------------------------
@pytest.fixture(scope="module")
def live():
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.experiment.engine import run_experiment

    return run_experiment(ExperimentConfig(widths=(32, 16, 4), batch=8, min_time=0.02))


def with_speedup(result, speedup, low, high):
    """`result` with autocast's median set to give `speedup` and an interval [low, high]."""
    auto = edited(result.autocast, median_ms=result.plain.median_ms / speedup)
    ev = TimingEvidence(
        interval=SpeedupInterval(low=low, high=high, level=LEVEL, pairs=24),
        stopped="max_time",
        target=0.05,
    )
    return retimed(result, autocast=auto, evidence=ev)


def test_a_live_run_records_its_interval_and_evidence(live):
    ev = live.evidence
    assert ev is not None and ev.target == RUN_TARGET
    assert ev.stopped in ("precise", "max_time")
    if ev.interval is None:  # a machine so busy that under 2 rounds were paired in time
        assert live.speed_call.kind == "noisy"
    else:
        assert ev.interval.pairs >= 2 and ev.interval.low <= ev.interval.high
    assert ev.blocks == live.plain.samples + live.autocast.samples
    latency = live.to_dict()["latency"]
    assert latency["speedup_interval"] == (ev.interval.to_dict() if ev.interval else None)
    assert isinstance(latency["stalls"], list)
    from autocast_explorer.core.experiment.result import ExperimentResult

    assert ExperimentResult.from_json(live.to_json()).evidence == ev
    rows = {row["mode"]: row for row in live.csv_rows()}
    expected = f"{ev.interval.low:.4f}" if ev.interval is not None else ""
    assert rows["autocast"]["speedup_low"] == expected and rows["plain"]["speedup_low"] == ""


def test_the_verdict_states_the_interval_with_the_speedup(live):
    from autocast_explorer.core.experiment.summary import format_summary, speed_title, verdict

    faster = with_speedup(live, 1.72, 1.66, 1.79)
    assert verdict(faster).startswith("autocast was 1.72× faster here (95%: 1.66–1.79); ")
    assert speed_title(faster) == (
        "autocast 1.72× faster (typical paired ratio, 95%: 1.66–1.79)",
        "ok",
    )
    assert "interval 1.660–1.790× (95%, from 24 paired blocks" in format_summary(faster)
    slower = with_speedup(live, 0.5, 0.48, 0.52)
    assert verdict(slower).startswith("autocast was 2.00× slower here (95%: 1.92–2.08); ")
    unclear = with_speedup(live, 1.06, 1.02, 1.10)
    # Can't tell: no figure, only what the interval spans.
    assert verdict(unclear).startswith(
        "can't tell whether autocast was faster: the interval spans about the same and faster "
        "(about the same = within 5%); "
    )
    assert "1.06" not in verdict(unclear) and "1.10" not in verdict(unclear)
    assert speed_title(unclear) == ("can't tell which was faster", "muted")


def test_too_noisy_states_no_speedup_in_the_headline_or_lesson_grade(live):
    from autocast_explorer.core.experiment.summary import format_summary, speed_title, verdict
    from autocast_explorer.core.learning.lessons import lesson

    noisy = with_speedup(live, 146.92, 0.4, 160.0)
    sentence = verdict(noisy)
    assert sentence.startswith("too noisy to tell whether autocast was faster: ")
    assert "146.92" not in sentence and "146.9" not in sentence
    assert "a longer maximum time" in sentence
    # No figure anywhere: the summary says why, the chart's title marks the bars.
    summary = format_summary(noisy)
    assert "speedup  not stated: too noisy to tell (see the verdict)" in summary
    assert "146.9" not in summary and "160.0" not in summary
    assert speed_title(noisy) == ("too noisy to tell: these bars are not a result", "warn")
    outcome = lesson("timing").check(noisy)
    assert outcome.graded is False and outcome.matches_tutorial is False
    assert outcome.headline.startswith("Too noisy to tell") and "146.92" not in outcome.headline
    assert outcome.headline.endswith("this run is not graded.")


def test_compare_shows_each_run_s_interval_and_call(live):
    from autocast_explorer.core.learning.compare import ComparedRun, Comparison, comparison_table

    runs = (
        ComparedRun("a", "a.json", with_speedup(live, 1.72, 1.66, 1.79)),
        ComparedRun("b", "b.json", with_speedup(live, 1.7, 0.5, 3.1)),
    )
    table = dict(comparison_table(Comparison(runs)))
    assert table["speedup"] == ["1.72× (95%: 1.66–1.79)", "—"]  # no figure: too noisy
    assert table["speed call"] == ["autocast faster", "too noisy to tell"]
    series = Comparison(runs).overlay()
    assert (series[1].speedup_low, series[1].speedup_high, series[1].call) == (0.5, 3.1, "noisy")


# ---- sweeps -----------------------------------------------------------------------------------
def test_a_crossing_gets_the_band_its_points_intervals_allow():
    from autocast_explorer.core.sweeps.crossover import (
        crossing_intervals,
        find_crossings,
        interval_words,
    )

    values = [1, 10, 100, 1000]
    speedups = [0.5, 0.8, 1.5, 2.0]
    lows = [0.45, 0.7, 1.2, 1.8]
    highs = [0.55, 0.95, 1.8, 2.2]
    (found,) = crossing_intervals(values, speedups, lows, highs)
    assert found.value == find_crossings(values, speedups)[0].value
    assert found.low == pytest.approx(find_crossings(values, highs)[0].value)
    assert found.high == pytest.approx(find_crossings(values, lows)[0].value)
    assert found.low < found.value < found.high
    assert interval_words(found, "batch").startswith("between batch ")
    # An upper edge above 1.0 everywhere leaves the lower end open.
    (open_low,) = crossing_intervals(values, speedups, lows, [1.1, 1.2, 1.8, 2.2])
    assert open_low.low is None and open_low.high == pytest.approx(found.high)
    assert interval_words(open_low, "batch").startswith("at or below batch ")


def test_each_grid_row_states_its_crossing_with_the_band_its_intervals_allow():
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.sweeps.crossover import (
        crossing_intervals,
        format_value,
        interval_words,
    )
    from autocast_explorer.core.sweeps.runner import run_grid

    config = ExperimentConfig(widths=(32, 16, 4), batch=4, min_time=0.02)
    grid = run_grid(config, [1, 8], [16, 32], probe_onednn=False)
    bands = {  # (width, batch): (low, median, high); the median is the point's speedup
        (16, 1): (0.45, 0.5, 0.55),
        (16, 8): (1.8, 2.0, 2.2),
        (32, 1): (1.8, 2.0, 2.2),
        (32, 8): (1.8, 2.0, 2.2),
    }
    points = tuple(
        retimed(
            p,
            # The medians (the bars) agree with the paired figure, as on a quiet machine.
            autocast=edited(p.autocast, median_ms=p.plain.median_ms / median),
            evidence=TimingEvidence(
                interval=SpeedupInterval(
                    low=low, high=high, level=LEVEL, pairs=24, estimate=median
                ),
                stopped="precise",
                target=0.03,
            ),
        )
        for p in grid.points
        for low, median, high in [bands[(p.value2, p.value)]]
    )
    grid = edited(grid, points=points)
    (found,) = grid.row_crossover_intervals(16)
    assert found == crossing_intervals([1, 8], [0.5, 2.0], [0.45, 1.8], [0.55, 2.2])[0]
    assert grid.row_crossover_intervals(32) == []
    words = interval_words(found, "batch")
    assert words.startswith("between batch ")
    at = format_value(grid.grid_rows[0].crossovers[0])
    assert grid.crossover_sentence == (
        f"Speedup crosses 1.0 at batch — width 16: {at} (by the 95% intervals: {words}); "
        "width 32: never."
    )


def banded(sweep, bands):
    """`sweep` with each point's (low, estimate, high), its medians agreeing with the estimate."""
    points = tuple(
        retimed(
            p,
            autocast=edited(p.autocast, median_ms=p.plain.median_ms / median),
            evidence=TimingEvidence(
                interval=SpeedupInterval(
                    low=low, high=high, level=LEVEL, pairs=24, estimate=median
                ),
                stopped="max_time",
                target=0.03,
            ),
        )
        for p, (low, median, high) in zip(sweep.points, bands, strict=True)
    )
    return edited(sweep, points=points)


def test_no_crossover_range_rests_on_points_that_could_not_tell():
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.sweeps.crossover import crossing_intervals, interval_words
    from autocast_explorer.core.sweeps.runner import run_sweep

    config = ExperimentConfig(widths=(32, 16, 4), batch=4, min_time=0.02)
    sweep = run_sweep(config, "batch", [1, 8, 64], probe_onednn=False)
    # Every point too noisy (intervals 2-4× wide across 1.0), their estimates crossing 1.0.
    noisy = banded(sweep, [(0.3, 0.6, 1.2), (0.5, 0.9, 1.6), (0.9, 1.8, 3.6)])
    assert not any(p.call.graded for p in noisy.points)
    assert noisy.crossover_sentence == (
        "No crossover can be told: no point could tell which mode was faster."
    )
    assert noisy.crossover_intervals == [] and noisy.crossover_interval is None
    assert noisy.to_dict()["crossover_interval"] is None
    # Two told points on one side, the untold one across 1.0: no crossing, so no range either.
    mixed = banded(sweep, [(0.5, 0.52, 0.54), (0.6, 0.62, 0.64), (0.9, 1.8, 3.6)])
    assert [p.call.kind for p in mixed.points] == ["slower", "slower", "noisy"]
    assert "By the points' 95% intervals" not in mixed.crossover_sentence
    assert mixed.crossover_sentence.startswith("No crossover (among the 2 of 3 points")
    # Where told points cross, the range is theirs.
    told = banded(sweep, [(0.5, 0.52, 0.54), (0.9, 1.8, 3.6), (1.9, 2.0, 2.1)])
    assert told.crossover_intervals == crossing_intervals(
        [1, 64], [0.52, 2.0], [0.5, 1.9], [0.54, 2.1]
    )
    (band,) = told.crossover_intervals
    assert told.crossover_sentence.endswith(
        f"By the points' 95% intervals: {interval_words(band, 'batch')}."
    )


def test_adaptive_sweep_points_carry_their_evidence_through_json():
    from autocast_explorer.core.experiment.certainty import SWEEP_TARGET
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.sweeps.result import SweepResult
    from autocast_explorer.core.sweeps.runner import run_sweep

    config = ExperimentConfig(widths=(32, 16, 4), batch=4, min_time=0.02)
    result = run_sweep(config, "batch", [1, 8], probe_onednn=False)
    for point in result.points:
        assert point.evidence is not None and point.evidence.target == SWEEP_TARGET
        assert point.evidence.stopped in ("precise", "max_time")
    fixed = run_sweep(config, "batch", [1, 8], probe_onednn=False, adaptive=False)
    assert all(p.evidence.target is None for p in fixed.points)
    loaded = SweepResult.from_json(result.to_json())
    assert [p.evidence for p in loaded.points] == [p.evidence for p in result.points]
    assert loaded.crossover_sentence == result.crossover_sentence
    data = result.to_dict()
    assert data["points"][0]["latency"]["stopped"] == result.points[0].evidence.stopped


def test_the_hardware_verdict_states_no_speedup_from_a_too_noisy_run():
    from autocast_explorer.core.hardware.cpu import environment
    from autocast_explorer.core.sweeps.verdict import measured_clause, single_run_verdict

    env = environment(None)
    noisy = single_run_verdict(env, "bfloat16", 128, 146.92, too_noisy=True)
    assert "in a single run, too noisy to tell" in noisy.sentence and "146" not in noisy.sentence
    told = single_run_verdict(env, "bfloat16", 128, 1.7)
    assert "autocast ran 1.7× faster at batch 128" in told.sentence
    nan = float("nan")
    assert measured_clause("batch", [1, 8], [nan, nan], noisy=2) == (
        "every point was too noisy to tell"
    )
    assert measured_clause("batch", [1, 8, 64], [nan, 2.0, 3.0], noisy=1).startswith(
        "autocast ran 2–3× faster at the 2 of 3 sizes it could tell"
    )


def test_progress_never_goes_back_while_the_interval_narrows():
    from autocast_explorer.core.runtime.progress import Reporter

    clock = FakeClock()
    factor = [1.25]

    @contextlib.contextmanager
    def alternate():
        factor[0] = 2.0 - factor[0]
        yield

    def auto():
        clock.now += 0.001 * factor[0]

    seen = []
    timing.measure_paired(
        [scripted(clock, itertools.repeat(0.001)), auto],
        0.02,
        Reporter(lambda f, m: seen.append((f, m))),
        max_time=0.1,
        target=RUN_TARGET,
        clock=clock,
        block_contexts=[None, alternate],
    )
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions)
    assert any("narrowing the interval" in m for _, m in seen)

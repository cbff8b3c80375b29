"""The speed call's three parts, kept apart: direction, factor, reasons for doubt.

Every case is constructed evidence (an interval, a load reading, stalled blocks) or a live run
on the tester's kit's `timing_noise` (scripted block times and load): none depends on how busy
the machine running the suite is.
"""

from __future__ import annotations

import json

import pytest

from autocast_explorer.core.experiment import timing
from autocast_explorer.core.experiment.certainty import (
    BIAS_BOUND,
    SAME_SPEED,
    TimingEvidence,
    judge,
    sure_direction,
)
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.interval import LEVEL, SpeedupInterval
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.experiment.speed_words import call_clause
from autocast_explorer.core.hardware.load import MachineLoad
from tests.edits import edited, retimed

QUIET = MachineLoad(wall_s=2.0, cores=2, other_cpu_s=0.0)
BUSY = MachineLoad(wall_s=2.0, cores=2, other_cpu_s=2.0)  # one of two cores taken


def evidence(low: float, high: float, estimate: float, load=QUIET, **extra) -> TimingEvidence:
    interval = SpeedupInterval(low=low, high=high, level=LEVEL, pairs=30, estimate=estimate)
    return TimingEvidence(interval=interval, load=load, **extra)


# ---- the rule ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("low", "high", "load", "expected"),
    [
        # quiet: the interval alone decides
        (1.66, 1.79, QUIET, ("faster", "faster", True)),
        (0.68, 0.72, QUIET, ("slower", "slower", True)),
        (0.97, 1.03, QUIET, ("same", "same", True)),
        (1.02, 1.10, QUIET, ("can't tell", None, False)),
        (0.50, 3.10, QUIET, ("too noisy", None, False)),
        # busy: the ratio itself may have moved up to BIAS_BOUND either way
        (0.13, 0.14, BUSY, ("slower", "slower", True)),  # 7× slower survives 3.9×: rough
        (4.50, 4.90, BUSY, ("faster", "faster", True)),
        (0.558, 0.614, BUSY, ("too noisy", None, False)),  # the AVX2 EPYC's 3.6× bias case
        (1.66, 1.79, BUSY, ("too noisy", None, False)),
    ],
)
def test_the_verdict_json_separates_direction_factor_and_doubt(low, high, load, expected):
    estimate = (low * high) ** 0.5
    call = judge(estimate, evidence(low, high, estimate, load), threads=2)
    part = call.verdict()
    assert part is not None
    data = part.model_dump()
    kind, direction, stated = expected
    assert (data["call"], data["direction"]) == (kind, direction)
    assert data["factor"] == (pytest.approx(estimate) if stated else None)
    if load is BUSY:
        assert "other programs used 1.0 of 2 cores" in data["reasons"]
        assert (
            f"other programs can move the ratio itself up to {BIAS_BOUND:g}× either way"
            in (data["reasons"])
        )
    if kind in ("faster", "slower", "same") and load is QUIET:
        assert data["reasons"] == () and call.rough == ""
    if kind in ("faster", "slower") and load is BUSY:
        assert call.rough == "the machine was busy"
        assert call.interval_text() == ""  # a 95% interval of a biased ratio is not shown


def test_a_direction_under_load_must_survive_the_bias_bound_either_way():
    edge = 0.999 / (SAME_SPEED * BIAS_BOUND)  # about the highest ratio still surely slower
    assert (
        sure_direction(SpeedupInterval(low=0.1, high=edge, level=LEVEL, pairs=30), BIAS_BOUND)
        == "slower"
    )
    assert (
        sure_direction(
            SpeedupInterval(low=0.1, high=edge * 1.01, level=LEVEL, pairs=30), BIAS_BOUND
        )
        is None
    )
    top = 1.001 * SAME_SPEED * BIAS_BOUND
    assert (
        sure_direction(SpeedupInterval(low=top, high=20, level=LEVEL, pairs=30), BIAS_BOUND)
        == "faster"
    )
    assert (
        sure_direction(SpeedupInterval(low=top * 0.99, high=20, level=LEVEL, pairs=30), BIAS_BOUND)
        is None
    )
    assert BIAS_BOUND >= 3.9  # the worst bias measured (bench/RESULTS.md): 3.88×


def test_a_wide_interval_clear_of_one_tells_the_direction_not_the_factor():
    call = judge(0.12, evidence(0.08, 0.16, 0.12), threads=1)
    assert (call.kind, call.rough) == ("slower", "the paired timings varied widely")
    assert call.figure_text() == "about 8× slower"
    # Under 95% coverage a wide interval tells nothing, not even the direction.
    few = TimingEvidence(
        interval=SpeedupInterval(low=0.08, high=0.16, level=0.75, pairs=3, estimate=0.12),
        load=QUIET,
    )
    assert judge(0.12, few, threads=1).kind == "noisy"


def test_stalls_throughout_are_load_too():
    stalls = tuple(timing.Stall(mode="float32", round=k, ms=40.0, median_ms=1.0) for k in range(20))
    busy = evidence(0.13, 0.14, 0.135, stalls=stalls, blocks=40)
    assert judge(0.135, busy, threads=1).rough == "the machine was busy"
    unclear = evidence(1.21, 1.37, 1.3, stalls=stalls, blocks=40)
    assert judge(1.3, unclear, threads=1).kind == "noisy"


def test_the_medians_ratio_outside_the_interval_is_too_noisy():
    ev = evidence(1.66, 1.79, 1.72)
    assert judge(1.72, ev, medians_ratio=1.0).kind == "noisy"
    assert judge(1.72, ev, medians_ratio=3.0).kind == "noisy"
    assert judge(1.72, ev, medians_ratio=1.66 / SAME_SPEED).kind == "faster"  # the edge
    reasons = judge(1.72, ev, medians_ratio=3.0).reasons
    assert "the ratio of the medians lies outside the paired blocks' interval" in reasons


@pytest.mark.parametrize(
    ("interval", "medians", "said"),
    [
        # Under MIN_PAIRS_95 pairs the interval is [min, max] at lower coverage: its rounds are
        # named instead, so no 75% or 50% "interval" reaches a learner.
        (
            SpeedupInterval(low=1.02, high=1.10, level=0.75, pairs=3, estimate=1.06),
            1.06,
            (
                "the 3 paired rounds range over about the same and faster (about the same = "
                "within 5%)",
            ),
        ),
        (
            SpeedupInterval(low=0.1, high=3.41, level=0.5, pairs=2, estimate=0.58),
            0.58,
            ("only 2 paired rounds, and they disagreed by a factor of 34 (more than 1.25)",),
        ),
        (
            SpeedupInterval(low=1.66, high=1.79, level=0.75, pairs=3, estimate=1.72),
            3.0,
            ("the ratio of the medians lies outside the range of the 3 paired rounds",),
        ),
    ],
)
def test_an_interval_of_lower_coverage_is_never_worded_as_an_interval(interval, medians, said):
    call = judge(interval.estimate, TimingEvidence(interval=interval, load=QUIET), 1, (), medians)
    assert call.reasons == said
    assert "interval" not in call_clause(call)
    verdict = call.verdict()
    assert verdict is not None and verdict.reasons == said  # the JSON says what the window says


#: The run under `make test-as-avx2`'s switches that said "too noisy" (bench/RESULTS.md): the
#: tutorial MLP at 1 thread beside one busy loop, 95% 0.1472–0.1616, estimate 0.1542, other
#: programs on one of two cores, blocks varying by an IQR of 32%, the medians' ratio outside.
AVX2_BAND = (0.1472, 0.1616, 0.1542)
ONE_LOOP = MachineLoad(wall_s=2.0, cores=2, other_cpu_s=2.0)
#: The highest ratio still surely slower, and the lowest surely faster, under the bias bound.
SLOWEST_EDGE = 1 / (SAME_SPEED * BIAS_BOUND)
FASTEST_EDGE = SAME_SPEED * BIAS_BOUND


@pytest.mark.parametrize("medians", [0.131, 0.178])  # below and above the interval ×1.05
def test_medians_off_the_interval_still_say_slower_when_both_clear_the_bias_bound(medians):
    low, high, estimate = AVX2_BAND
    assert not low / SAME_SPEED <= medians <= high * SAME_SPEED  # off: the old rule said noisy
    call = judge(
        estimate,
        evidence(low, high, estimate, ONE_LOOP),
        threads=1,
        iqr_ratios=(0.32, 0.12),
        medians_ratio=medians,
    )
    assert (call.kind, call.rough) == ("slower", "the medians and the paired blocks disagreed")
    assert call.figure_text() == "about 6× slower"
    assert call.interval_text() == ""  # the interval is of a biased ratio: not shown
    assert call.reasons == (
        "the ratio of the medians lies outside the paired blocks' interval",
        "other programs used 1.0 of 2 cores",
        "blocks of one mode varied by an IQR of 32% of its median",
    )
    written = call.verdict()
    assert written is not None
    assert (written.call, written.direction, written.factor) == ("slower", "slower", estimate)


def test_under_load_medians_off_the_interval_are_judged_by_the_bias_bound_too():
    low, high, estimate = AVX2_BAND
    busy = evidence(low, high, estimate, BUSY)  # 2 threads: disturbed
    call = judge(estimate, busy, threads=2, iqr_ratios=(0.40,), medians_ratio=0.131)
    assert (call.kind, call.rough) == ("slower", "the machine was busy")


@pytest.mark.parametrize("load", [QUIET, BUSY])
def test_the_medians_ratio_must_clear_the_bias_bound_as_the_interval_does(load):
    """Both must lie beyond the bound: whichever is nearer 1 decides (no wrong direction)."""
    band = evidence(0.10, 0.11, 0.105, load)
    assert judge(0.105, band, threads=2, medians_ratio=SLOWEST_EDGE * 0.999).kind == "slower"
    assert judge(0.105, band, threads=2, medians_ratio=SLOWEST_EDGE * 1.01).kind == "noisy"
    # The interval at the edge, the medians far beyond: the interval decides.
    edge = evidence(0.2, SLOWEST_EDGE * 0.999, 0.22, load)
    assert judge(0.22, edge, threads=2, medians_ratio=0.1).kind == "slower"
    over = evidence(0.2, SLOWEST_EDGE * 1.01, 0.22, load)
    assert judge(0.22, over, threads=2, medians_ratio=0.1).kind == "noisy"
    # Faster, mirrored.
    fast = evidence(6.0, 6.5, 6.2, load)
    assert judge(6.2, fast, threads=2, medians_ratio=FASTEST_EDGE * 1.001).kind == "faster"
    assert judge(6.2, fast, threads=2, medians_ratio=FASTEST_EDGE * 0.99).kind == "noisy"
    # A medians' ratio on the other side of 1 never lets a direction stand.
    assert judge(0.105, band, threads=2, medians_ratio=5.0).kind == "noisy"


def test_under_load_a_medians_ratio_inside_the_interval_but_short_of_the_bound_is_noisy():
    high = SLOWEST_EDGE * 0.99  # the interval clears the bound ...
    band = evidence(0.2, high, 0.22, BUSY)
    medians = high * 1.04  # ... the medians' ratio lies within it (×1.05), yet short of the bound
    assert judge(0.22, band, threads=2, medians_ratio=medians).kind == "noisy"
    assert judge(0.22, band, threads=2, medians_ratio=0.22).kind == "slower"


# ---- in the documents --------------------------------------------------------------------
@pytest.fixture(scope="module")
def steady_result():
    """A tiny live run whose timing is scripted (clear, about the same, quiet)."""
    patch = pytest.MonkeyPatch()
    from autocast_explorer.testing.noise import TimingNoise

    TimingNoise(patch).clear(1.0)
    try:
        return run_experiment(ExperimentConfig(widths=(32, 16, 4), batch=8, min_time=0.02))
    finally:
        patch.undo()


def _document(result: ExperimentResult, plain_ms: float, auto_ms: float, band) -> dict:
    low, high, estimate = band
    doc = json.loads(result.to_json())
    latency = doc["latency"]
    latency["plain"]["median_ms"] = plain_ms
    latency["autocast"]["median_ms"] = auto_ms
    latency["speedup_interval"].update(low=low, high=high, estimate=estimate, level=LEVEL)
    latency["speedup"] = estimate
    latency["load"] = None
    latency["stalls"] = []
    return doc


def test_a_document_whose_medians_contradict_its_interval_reads_as_too_noisy(steady_result):
    doc = _document(steady_result, 3.0, 1.0, (1.66, 1.79, 1.72))
    assert ExperimentResult.from_dict(doc).speed_call.kind == "noisy"
    doc = _document(steady_result, 1.0, 1.0, (1.66, 1.79, 1.72))
    assert ExperimentResult.from_dict(doc).speed_call.kind == "noisy"
    doc = _document(steady_result, 1.72, 1.0, (1.66, 1.79, 1.72))
    assert ExperimentResult.from_dict(doc).speed_call.kind == "faster"


def test_a_document_whose_medians_and_interval_both_clear_the_bound_states_the_direction(
    steady_result,
):
    doc = _document(steady_result, 0.131, 1.0, AVX2_BAND)  # the medians off the interval
    doc["latency"]["autocast"].update(p25_ms=0.84, p75_ms=1.24, iqr_ms=0.40)  # IQR 40%
    read = ExperimentResult.from_dict(doc)
    assert (read.speed_call.kind, read.speed_call.rough) == (
        "slower",
        "the medians and the paired blocks disagreed",
    )
    assert "blocks of one mode varied by an IQR of 40% of its median" in read.speed_call.reasons
    verdict = json.loads(read.to_json())["latency"]["verdict"]
    assert (verdict["call"], verdict["direction"]) == ("slower", "slower")
    assert verdict["factor"] == pytest.approx(0.1542)


def test_the_result_document_carries_the_call_the_window_makes(steady_result):
    doc = _document(steady_result, 1.72, 1.0, (1.66, 1.79, 1.72))
    read = ExperimentResult.from_dict(doc)
    written = json.loads(read.to_json())["latency"]["verdict"]
    assert written == {"call": "faster", "direction": "faster", "factor": 1.72, "reasons": []}
    noisy = retimed(read, evidence=evidence(0.5, 3.1, 1.72))
    written = json.loads(noisy.to_json())["latency"]["verdict"]
    assert (written["call"], written["direction"], written["factor"]) == ("too noisy", None, None)
    assert written["reasons"] == list(noisy.speed_call.reasons)


def test_a_live_run_on_scripted_timing_makes_each_call(steady_result, monkeypatch):
    """The tester's kit decides what a live run's timing sees; the forwards run for real."""
    from autocast_explorer.testing.noise import TimingNoise

    assert steady_result.speed_call.kind == "same"
    noise = TimingNoise(monkeypatch)
    config = ExperimentConfig(widths=(32, 16, 4), batch=8, min_time=0.02, threads=1)
    noise.clear(0.5)
    slower = run_experiment(config)
    assert (slower.speed_call.kind, slower.speed_call.rough) == ("slower", "")
    assert slower.speedup == pytest.approx(0.5, rel=0.02)
    noise.busy(0.1)  # other programs on every core
    rough = run_experiment(config.replace(min_time=0.1))  # 10 ms blocks: enough for 95%
    assert (rough.speed_call.kind, rough.speed_call.rough) == ("slower", "the machine was busy")
    assert rough.evidence.load.other_cores == pytest.approx(rough.evidence.load.cores)
    noise.busy(1.5)
    assert run_experiment(config).speed_call.kind == "noisy"  # 1.5× cannot survive 3.9×
    noise.noisy()
    assert run_experiment(config).speed_call.kind == "noisy"
    verdict = json.loads(rough.to_json())["latency"]["verdict"]
    assert (verdict["call"], verdict["direction"]) == ("slower", "slower")
    assert verdict["factor"] == pytest.approx(rough.speedup)


# ---- the same call everywhere it is said ----------------------------------------------------
def test_the_hardware_verdict_says_what_the_run_s_headline_says():
    from autocast_explorer.core.hardware.cpu import environment
    from autocast_explorer.core.sweeps.verdict import measured_clause, single_run_verdict

    env = environment(None)

    def said(low, high, figure, load=QUIET):
        call = judge(figure, evidence(low, high, figure, load), threads=2)
        return single_run_verdict(env, "bfloat16", 8, figure, call=call).measured

    # Never "1× faster" under "about the same", nor "1.1× faster" under "can't tell".
    assert said(1.0, 1.04, 1.02) == (
        "in a single run, autocast and float32 ran at about the same speed at batch 8"
    )
    assert (
        said(1.02, 1.10, 1.06)
        == "in a single run, can't tell whether autocast was faster at batch 8"
    )
    assert said(1.66, 1.79, 1.72) == "in a single run, autocast ran 1.7× faster at batch 8"
    assert said(0.13, 0.14, 0.135, BUSY) == (
        "in a single run, autocast ran slower at batch 8, about 7× (the machine was busy)"
    )
    assert said(0.5, 3.1, 1.25) == "in a single run, too noisy to tell"
    assert measured_clause("batch", [8], [1.03]) == (
        "autocast and float32 ran at about the same speed at batch 8"
    )


def test_a_sweep_whose_points_cannot_tell_states_no_crossover():
    from autocast_explorer.core.sweeps.crossover import crossover_sentence

    nan = float("nan")
    assert crossover_sentence("batch", [1, 8, 64], [nan, nan, nan]) == (
        "No crossover can be told: no point could tell which mode was faster."
    )
    assert crossover_sentence("batch", [1, 8, 64], [0.5, nan, 0.7]) == (
        "No crossover (among the 2 of 3 points that could tell): the speedup stays below 1.0 "
        "from batch 1 … 64."
    )


def test_a_run_that_stopped_precise_yet_cannot_tell_says_so_where_it_stopped(steady_result):
    from autocast_explorer.core.experiment.summary import format_summary

    # A user model once printed "interval 0.041–0.045× … within ±5%" and then "too noisy".
    auto = edited(steady_result.autocast, median_ms=steady_result.plain.median_ms / 1.0)
    noisy = retimed(  # the bars disagree: too noisy
        steady_result,
        autocast=auto,
        evidence=evidence(0.041, 0.045, 0.043, BUSY, stopped="precise", target=0.05),
    )
    text = format_summary(noisy)
    assert noisy.speed_call.kind == "noisy"
    assert "interval 0.041" not in text
    assert (
        "timing stopped when the interval was within ±5% (too noisy to tell all the same: see "
        "the verdict)"
    ) in text
    assert "speedup  not stated: too noisy to tell (see the verdict)" in text


def test_a_latency_is_never_written_in_scientific_notation():
    from autocast_explorer.core.experiment.pace import ms_text

    assert [ms_text(v) for v in (0.0421, 12.34, 250.0, 6380.2)] == [
        "0.0421 ms",
        "12.3 ms",
        "250 ms",
        "6380 ms",
    ]


def test_the_headline_states_a_rough_factor_roughly_and_none_when_it_cannot_tell(steady_result):
    from autocast_explorer.core.experiment.headline import speed_sentence

    def shown(low: float, high: float, load: MachineLoad = QUIET) -> str:
        estimate = (low * high) ** 0.5
        plain_ms = steady_result.plain.median_ms
        auto = edited(steady_result.autocast, median_ms=plain_ms / estimate)
        told = evidence(low, high, estimate, load)
        return speed_sentence(retimed(steady_result, autocast=auto, evidence=told))

    packed = MachineLoad(wall_s=2.0, cores=2, other_cpu_s=4.0)  # every core taken
    assert shown(0.13, 0.14, packed) == "Autocast was slower here — about 7×."
    assert shown(0.49, 0.51) == "Autocast was 2.00× slower here."
    assert shown(1.66, 1.79) == "Autocast was 1.72× faster here."
    assert shown(1.02, 1.10) == "Can't tell whether autocast was faster or slower here."
    assert shown(0.5, 3.1) == "Too noisy to tell whether autocast was faster here."
    assert shown(1.66, 1.79, packed) == "Too noisy to tell whether autocast was faster here."

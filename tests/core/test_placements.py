"""Per-call, hoisted and pre-cast autocast: casts observed with a dispatch mode, and timed."""

import json

import pytest

from autocast_explorer.core.documents.reader import DocumentFormatError
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.interval import SpeedupInterval
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.experiment.timing import measure_paired
from autocast_explorer.core.sweeps.placements import (
    PlacementReport,
    attach,
    explain,
    format_bytes,
    format_placements,
    from_result,
    measure_placements,
)
from tests.steady_clock import steady_timing

# widths 32 → 16 → 4, batch 8: fc1.weight 16·32, fc1.bias 16, fc2.weight 4·16, fc2.bias 4,
# input 8·32 elements; each cast writes a bfloat16 copy (2 bytes per element).
SMALL = ExperimentConfig(widths=(32, 16, 4), batch=8, min_time=0.02)
WEIGHTS_AND_BIASES = 16 * 32 + 16 + 4 * 16 + 4
INPUT = 8 * 32


@pytest.fixture(scope="module")
def report():
    # Timed on a steady clock: the intervals below cannot lose their pairs to a busy machine.
    with steady_timing():
        return measure_placements(SMALL)


def test_per_call_casts_every_weight_bias_and_the_input_each_forward(report):
    pc = report.per_call
    assert pc.casts_per_forward == 5  # 2 Linear layers × (weight + bias) + the input
    assert pc.cast_bytes == 2 * (WEIGHTS_AND_BIASES + INPUT) == 1704
    assert pc.cast_ops == {"aten._to_copy.default": 5}
    assert pc.one_time_casts == 0


def test_hoisted_caches_the_weight_casts(report):
    ho = report.hoisted
    assert ho.casts_per_forward == 1  # only the input, which does not require grad
    assert ho.cast_bytes == 2 * INPUT == 512
    assert ho.one_time_casts == 4
    assert ho.one_time_cast_bytes == 2 * WEIGHTS_AND_BIASES
    assert ho.casts_per_forward < report.per_call.casts_per_forward


def test_pre_cast_makes_no_casts_per_forward(report):
    pre = report.pre_cast
    assert pre.casts_per_forward == 0
    assert pre.cast_bytes == 0
    assert pre.one_time_casts == 5  # model.to(dtype) and x.to(dtype), observed
    assert pre.one_time_cast_bytes == 1704


def test_deeper_model_counts_scale_with_layers():
    config = ExperimentConfig(widths=(16, 8, 8, 8, 2), batch=3, min_time=0.01, dtype="float16")
    r = measure_placements(config)
    assert r.dtype == "float16"
    assert r.per_call.casts_per_forward == 2 * 4 + 1
    assert r.hoisted.casts_per_forward == 1
    assert r.hoisted.one_time_casts == 8
    assert r.pre_cast.casts_per_forward == 0


def test_every_placement_is_timed_side_by_side(report):
    for mode in report.modes:
        assert mode.median_ms > 0
        assert mode.latency.samples >= 3
        # measured for the run's budget, like a mode of run_experiment (the cold call counts
        # toward the budget: the timing protocol stops a mode once cold + blocks reach it)
        latency = mode.latency
        spent = (sum(latency.times_ms) * latency.block_size + latency.cold_ms) / 1e3
        assert spent >= SMALL.min_time
    assert report.float32.median_ms > 0


def test_explanation_states_the_observed_numbers(report):
    text = report.explanation
    assert text.startswith("Per-call autocast made 5 casts (1.7 KiB) in every forward")
    assert "one hoisted region cached 4 of them and made 1 cast (512 B) per forward" in text
    assert "pre-casting made no casts per forward" in text
    assert f"float32 {report.float32.median_ms:.3f} ms" in text


def test_explanation_words_follow_the_measurements(report):
    base = report.per_call
    fast = type(base)(**{**base.__dict__, "name": "pre_cast", "interval": None})
    text = explain("bfloat16", base.median_ms, base, report.hoisted, fast)
    assert "Casting costs too little to measure here" in text
    assert "about as fast as float32 (1.00×)" in text
    # Paired intervals decide: pre-cast vs per-call cannot be told apart here.
    unclear = SpeedupInterval(low=0.98, high=1.09, level=0.95, pairs=30, estimate=1.03)
    text = explain("bfloat16", base.median_ms, base, report.hoisted, fast, {"pre_cast": unclear})
    assert (
        f"pre-casting made {base.casts_per_forward} casts per forward, can't tell whether "
        "faster than per-call."  # no figure where the interval cannot tell
    ) in text
    assert "Whether casting costs anything here, this run cannot tell" in text


@pytest.mark.parametrize(
    ("ratio", "low", "high", "alone", "words"),
    [
        (1.32, 1.25, 1.40, False, "1.32× faster than per-call (95%: 1.25–1.40)"),
        (0.4, 0.38, 0.42, True, "2.50× slower (95%: 2.38–2.63)"),
        (1.0, 0.99, 1.02, False, "about as fast as per-call (1.00×, 95%: 0.99–1.02)"),
        (1.03, 0.98, 1.09, True, "can't tell"),  # no figure where it cannot tell
        (1.03, 0.70, 1.50, False, "too noisy to tell against per-call"),
    ],
)
def test_a_placement_comparison_says_what_its_interval_supports(ratio, low, high, alone, words):
    from autocast_explorer.core.sweeps.placements import _versus

    interval = SpeedupInterval(low=low, high=high, level=0.95, pairs=30, estimate=ratio)
    assert _versus(ratio, interval, "per-call", alone=alone) == words


def test_each_placement_carries_its_interval_against_float32(report):
    for mode in report.modes:
        band = mode.interval
        assert band is not None and band.pairs >= 2
        assert band.low <= report.speedup(mode) == band.estimate <= band.high
        words = report.vs_float32(mode)  # slower ones as times longer: 1 ÷ the bounds
        if words in ("can't tell", "too noisy to tell"):  # this machine's load: no figure
            assert f"{band.low:.2f}" not in words
        else:
            assert words.endswith((f"{band.text()})", f"{band.slower_text()})"))
    again = type(report).from_dict(report.to_dict())
    assert [m.interval for m in again.modes] == [m.interval for m in report.modes]
    assert f"vs float32: {report.vs_float32(report.per_call)}" in format_placements(report)


def test_format_bytes():
    assert format_bytes(852) == "852 B"
    assert format_bytes(3408) == "3.3 KiB"
    assert format_bytes(8 * 2**20) == "8.0 MiB"


def test_block_contexts_wrap_each_block_outside_the_timer():
    entered = []
    inside = []

    class Region:
        def __enter__(self):
            entered.append(1)
            inside.append(True)

        def __exit__(self, *exc):
            inside.pop()

    calls = []
    now = [0.0]  # a fake clock: no stalls from a busy machine can change the block count

    def first():
        calls.append(bool(inside))
        now[0] += 1e-5

    def second():
        now[0] += 1e-5

    stats = measure_paired(
        [first, second], 0.005, block_contexts=[Region, None], clock=lambda: now[0]
    ).stats
    assert stats[0].samples >= 3
    assert all(calls)  # every call of mode 0 ran inside its context
    # One context per block: the cold call, each (≥ 3) single-call warm-up and each timed block.
    warm_ups = len(entered) - 1 - stats[0].samples
    assert warm_ups >= 3
    assert len(calls) == 1 + warm_ups + stats[0].samples * stats[0].block_size
    assert inside == []


def test_json_round_trip_through_the_result(report):
    result = run_experiment(SMALL)
    with_placements = attach(result, report)
    data = json.loads(with_placements.to_json())
    section = data["placements"]
    assert set(section) >= {"per_call", "hoisted", "pre_cast", "float32", "explanation"}
    assert section["per_call"]["casts_per_forward"] == 5
    assert section["hoisted"]["cast_bytes"] == 512
    assert section["pre_cast"]["median_ms"] == report.pre_cast.median_ms
    loaded = ExperimentResult.from_json(with_placements.to_json())
    assert from_result(loaded) == report
    assert from_result(result) is None
    text = format_placements(report)
    assert "per-call" in text and "5 casts per forward (1.7 KiB)" in text
    assert "plus 4 once (1.2 KiB)" in text


def test_bad_placements_sections_are_refused(report):
    good = report.to_dict()
    with pytest.raises(DocumentFormatError, match=r"placements\.hoisted: missing"):
        PlacementReport.from_dict({k: v for k, v in good.items() if k != "hoisted"})
    bad = json.loads(json.dumps(good))
    bad["per_call"]["casts_per_forward"] = 2.5
    with pytest.raises(DocumentFormatError, match=r"placements\.per_call\.casts_per_forward"):
        PlacementReport.from_dict(bad)
    bad = json.loads(json.dumps(good))
    bad["pre_cast"]["median_ms"] = 123.0
    with pytest.raises(DocumentFormatError, match=r"differs from latency\.median_ms"):
        PlacementReport.from_dict(bad)

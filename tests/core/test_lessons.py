"""Lessons describe what was measured; the exercise is graded from the measurement."""

import re

import pytest
import torch

from autocast_explorer.core.experiment.capture import LayerDtypes
from autocast_explorer.core.experiment.certainty import TimingEvidence
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.interval import SpeedupInterval
from autocast_explorer.core.experiment.pace import ms_text
from autocast_explorer.core.experiment.summary import speed_clause
from autocast_explorer.core.hardware.capabilities import native_support
from autocast_explorer.core.learning.lessons import (
    CHARTS,
    EXERCISE,
    LESSONS,
    PROBE_OPS,
    OpObservation,
    Probe,
    lesson,
    measure_probe,
    run_lesson,
)
from tests.edits import edited, retimed
from tests.steady_rate import steady_rates

FAST = {"min_time": 0.02}

#: The tutorial's own explanatory sentences: the lessons must say these things in other words.
TUTORIAL_SENTENCES = (
    "Autocast is a context manager that runs eligible operations in a lower precision dtype.",
    "On CPU that dtype is bfloat16, a 16-bit float with less precision and the same range as "
    "float32.",
    "A Linear layer without autocast takes float32 in and returns float32.",
    "Every operation pays full precision cost.",
    "Inside the autocast block, the same layer returns bfloat16.",
    "The layer itself stays stored in float32.",
    "Autocast keeps a short list of operations in float32 for accuracy.",
    "Softmax and mean are on that list.",
    "Lower precision changes the last digits of the scores.",
    "The predicted class for each row stays the same here.",
    "The two times vary on every run, so treat them as observations, not promises.",
    "On the recorded run, autocast was the slower of the two.",
    "This small model gives bfloat16 too little work to repay its conversion cost on this machine.",
    "A gain is not guaranteed.",
)


@pytest.fixture(scope="module")
def results():
    """One live run per distinct lesson config (lessons 1, 2, 4, 5 share the tutorial's); the
    time guard forecasts at a fixed rate, so a busy machine cannot refuse one."""
    cache = {}
    with steady_rates():
        for item in LESSONS:
            config = item.config.replace(**FAST)
            if config not in cache:
                cache[config] = run_experiment(config)
    return cache


def result_for(results, lesson_id):
    return results[lesson(lesson_id).config.replace(**FAST)]


def with_autocast_out(result, dtypes):
    """A copy of `result` whose Linear layers report these autocast output dtypes."""
    it = iter(dtypes)
    layers = tuple(
        la.model_copy(update={"autocast": LayerDtypes.of(la.autocast.in_dtype, next(it))})
        if la.kind == "Linear"
        else la
        for la in result.layers
    )
    return edited(result, layers=layers)


def test_lessons_are_complete_data():
    assert [x.number for x in LESSONS] == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert len({x.id for x in LESSONS}) == 9
    for item in LESSONS:
        assert item.chart in CHARTS
        assert item.title and len(item.explanation) > 150 and item.tutorial_claim
        assert isinstance(item.config, ExperimentConfig)
    assert [x.chart for x in LESSONS] == [
        "dtype",
        "dtype",
        "dtype",
        "agreement",
        "latency",
        "loss",
        "dtype",
        "accuracy",
        "sensitivity",
    ]
    assert lesson("float32-ops").config == ExperimentConfig(head="softmax")
    assert lesson("timing").config == ExperimentConfig()


def test_lessons_do_not_copy_the_tutorials_prose():
    ours = " ".join(
        f"{x.title} {x.explanation} {x.tutorial_claim} {x.try_next}" for x in LESSONS
    ).casefold()
    copied = [s for s in TUTORIAL_SENTENCES if s.casefold().rstrip(".") in ours]
    assert copied == []
    # Nor long runs of its words (8 or more in a row).
    words = re.findall(r"[a-z0-9]+", ours)
    ours_grams = {tuple(words[i : i + 8]) for i in range(len(words) - 7)}
    for sentence in TUTORIAL_SENTENCES:
        theirs = re.findall(r"[a-z0-9]+", sentence.casefold())
        grams = {tuple(theirs[i : i + 8]) for i in range(len(theirs) - 7)}
        assert not grams & ours_grams, sentence


def test_lesson_1_plain_is_float32_as_measured(results):
    r = result_for(results, "plain")
    outcome = lesson("plain").check(r)
    assert all(la.plain.out_dtype == "float32" for la in r.layers)
    assert outcome.headline == (
        f"Without autocast, all {len(r.layers)} layers took float32 in and gave float32 out."
    )
    assert f"was {r.output_dtype_plain}." in outcome.sentences[0]
    assert f"{r.plain.median_ms:.3g} ms" in outcome.sentences[1]
    assert outcome.matches_tutorial is True and outcome.chart == "dtype"


def test_lesson_2_linear_outputs_bfloat16_and_weights_stay_float32(results):
    r = result_for(results, "linear")
    probe = measure_probe(r.config)
    assert probe.weight_dtypes == ("float32",)
    outcome = lesson("linear").check(r, probe)
    measured = {la.autocast.out_dtype for la in r.layers if la.kind == "Linear"}
    assert measured == {"bfloat16"}
    assert outcome.headline.startswith(
        "Under autocast (bfloat16), fc1, fc2 and fc3 returned bfloat16; "
        "without autocast they returned float32."
    )
    assert "fc1 was fed float32 and still returned bfloat16" in outcome.text
    assert "stored weights were still float32" in outcome.text
    assert outcome.matches_tutorial is True


def test_lesson_2_follows_a_float16_measurement():
    r = run_experiment(ExperimentConfig(widths=(16, 8, 4), batch=4, dtype="float16", **FAST))
    outcome = lesson("linear").check(r, measure_probe(r.config))
    assert "fc1 and fc2 returned float16" in outcome.headline
    assert "temporary float16 copies" in outcome.text
    assert EXERCISE.grade("float16", r).correct is True
    assert EXERCISE.grade("bfloat16", r).correct is False


def test_lesson_2_reports_a_layer_that_did_not_switch(results):
    r = with_autocast_out(result_for(results, "linear"), ["bfloat16", "float32", "bfloat16"])
    outcome = lesson("linear").check(r)
    assert "fc1 and fc3 returned bfloat16; fc2 returned float32" in outcome.headline
    assert outcome.matches_tutorial is False
    assert "were not inspected" in outcome.text


def test_lesson_3_softmax_follows_its_input_on_cpu(results):
    run = run_lesson(lesson("float32-ops"), lesson("float32-ops").config.replace(**FAST))
    r, probe, outcome = run.result, run.probe, run.outcome
    head = next(la for la in r.layers if la.name == "softmax")
    # What this torch really does: bfloat16 in, bfloat16 out (not forced to float32).
    assert (head.autocast.in_dtype, head.autocast.out_dtype) == ("bfloat16", "bfloat16")
    assert "softmax head was fed bfloat16 and returned bfloat16" in outcome.headline
    assert "follows its input" in outcome.headline
    assert outcome.matches_tutorial is False
    for op in PROBE_OPS:
        assert probe.op(op, "float32").output_dtype == "float32"
        assert probe.op(op, "bfloat16").output_dtype == "bfloat16"
    with torch.autocast("cpu"):
        direct = torch.softmax(torch.randn(2, 3).bfloat16(), dim=1).dtype
    assert direct == torch.bfloat16
    assert "on a float32 tensor: softmax → float32" in outcome.text
    assert "on a bfloat16 tensor: softmax → bfloat16, log_softmax → bfloat16" in outcome.text
    assert "relu1 and relu2 ran bfloat16 → bfloat16" in outcome.text


def test_lesson_3_wording_follows_the_data(results):
    r = result_for(results, "float32-ops")
    kept = edited(
        r,
        layers=tuple(
            la.model_copy(update={"autocast": LayerDtypes.of("bfloat16", "float32")})
            if la.name == "softmax"
            else la
            for la in r.layers
        ),
    )
    forced = Probe(
        "bfloat16",
        "x",
        ("float32",),
        tuple(OpObservation(op, d, "float32") for d in ("float32", "bfloat16") for op in PROBE_OPS),
    )
    outcome = lesson("float32-ops").check(kept, forced)
    assert "returned float32: here it was kept in float32" in outcome.headline
    assert outcome.matches_tutorial is True
    no_head = lesson("float32-ops").check(result_for(results, "plain"))
    assert "no softmax head" in no_head.headline and no_head.matches_tutorial is False


def test_lesson_4_agreement_sentences_carry_the_numbers(results):
    r = result_for(results, "agreement")
    a = r.agreement
    outcome = lesson("agreement").check(r)
    assert outcome.headline == f"The predicted class was the same on all {a.rows} rows."
    assert f"at most {a.max_abs_diff:.3g}" in outcome.sentences[0]
    assert outcome.matches_tutorial == (a.agree == a.rows and a.allclose)
    flipped = edited(
        r, agreement=a.model_copy(update={"agree": a.rows - 3, "fraction": (a.rows - 3) / a.rows})
    )
    text = lesson("agreement").check(flipped).headline
    assert f"same on {a.rows - 3} of {a.rows} rows" in text and "3 flipped" in text


@pytest.mark.parametrize(
    ("ratio", "fragment", "matches"),
    [
        (2.0, "Autocast was 2.00× faster here", False),
        (0.5, "Autocast was 2.00× slower here", True),
        (1.0, "Autocast ran at about the same speed here (1.00×)", False),
    ],
)
def test_lesson_5_phrases_the_measured_speedup(results, ratio, fragment, matches):
    r = result_for(results, "timing")
    auto = edited(r.autocast, median_ms=r.plain.median_ms / ratio)
    # Without evidence (as saved before intervals) the call follows the speedup alone;
    # calls from intervals are tested in test_certainty.py.
    outcome = lesson("timing").check(retimed(r, autocast=auto, evidence=None))
    assert fragment in outcome.headline
    assert outcome.matches_tutorial is matches
    assert "134,154 parameters" in outcome.text  # 256·256·2 + 256·10 weights + 522 biases


@pytest.mark.parametrize(
    ("ratio", "headline"),
    [
        (
            0.5,
            "Autocast was 2.00× slower here: that rules out eager autocast, not every way of "
            "lowering precision.",
        ),
        (
            2.0,
            "Autocast was 2.00× faster here: eager autocast pays; a plan asks whether another "
            "way pays more.",
        ),
    ],
)
def test_the_plan_step_goes_on_from_what_the_run_measured(results, ratio, headline):
    r = result_for(results, "plan")
    auto = edited(r.autocast, median_ms=r.plain.median_ms / ratio)
    outcome = lesson("plan").check(retimed(r, autocast=auto, evidence=None))
    assert outcome.headline == headline
    assert not outcome.graded and outcome.chart == "sensitivity"
    assert f"Measured here: {ms_text(r.plain.median_ms)} per forward in float32 and " in (
        outcome.text
    )
    assert f"{ms_text(auto.median_ms)} under bfloat16 autocast, on " in outcome.text
    assert "the eager, compiled and implicit routes" in outcome.text


def test_the_plan_step_on_the_live_run_says_what_this_cpu_is(results):
    """True on every CPU kind: the hardware sentence follows the flags the run recorded, and
    the headline the run's own call (no fixed claim that autocast was slower)."""
    r = result_for(results, "plan")
    outcome = lesson("plan").check(r)
    said = speed_clause(r)
    assert outcome.headline.startswith(f"{said[:1].upper()}{said[1:]}: ")
    support = native_support(r.environment.cpu_flags, "bfloat16")
    has = "has native bfloat16" if support.native else "has no native bfloat16"
    assert f"For the record, this CPU {has} (" in outcome.text
    # After the run's own clause (which may say "slower and about the same" when it cannot
    # tell), nothing claims autocast was slower unless the run said so.
    rest = outcome.headline[len(said) + 2 :]
    assert "slower" not in rest or r.speed_call.kind == "slower"


def test_lesson_5_on_the_live_run(results):
    r = result_for(results, "timing")
    outcome = lesson("timing").check(r)
    call = r.speed_call  # from the run's interval: a busy machine may not be able to tell
    said = speed_clause(r)
    if call.graded:  # the window's words, whichever call this machine's load allowed
        assert outcome.headline == f"{said[:1].upper()}{said[1:]}."
    else:
        assert outcome.headline.endswith("this run is not graded.") and not outcome.graded
    assert f"{r.plain.median_ms:.3g} ms in float32" in outcome.text
    # The hardware sentence follows the flags this run recorded, whichever CPU kind ran it.
    support = native_support(r.environment.cpu_flags, "bfloat16")
    assert support.native == r.environment.native_bf16
    if support.native:
        assert f"this CPU has native bfloat16 ({support.present_text})" in outcome.text
        assert "nothing here multiplies bfloat16 natively" not in outcome.text
    else:
        assert f"this CPU has no native bfloat16 (it lacks {support.lacks})" in outcome.text
        rates = (
            f"at {r.gflops('autocast'):,.1f} GFLOP/s against {r.gflops('plain'):,.1f} GFLOP/s "
            "in float32"
        )
        assert (rates in outcome.text) is not call.too_noisy  # no CPU fact from a noisy run


def test_lesson_5_names_its_figure_and_the_ratio_of_the_medians_it_shows(results):
    r = result_for(results, "timing")
    # A paired figure of 0.35× beside medians whose ratio is 0.37× (inside the interval, ×1.05
    # either side, or the run would be too noisy): both said, each named.
    auto = edited(r.autocast, median_ms=r.plain.median_ms / 0.37)
    ev = TimingEvidence(
        interval=SpeedupInterval(low=0.34, high=0.36, level=0.95, pairs=24, estimate=0.35),
        stopped="precise",
    )
    outcome = lesson("timing").check(retimed(r, autocast=auto, evidence=ev))
    assert outcome.headline.startswith("Autocast was 2.86× slower here (95%: 2.78–2.94)")
    shown = next(s for s in outcome.sentences if s.startswith("Median per forward:"))
    assert f"{ms_text(r.plain.median_ms)} in float32, {ms_text(auto.median_ms)}" in shown
    assert (
        "The figure above is the typical paired ratio (each float32 block ÷ the autocast block "
        "timed right after it); the two medians shown give 0.37×."
    ) in outcome.sentences
    assert "0.35" not in " ".join(outcome.sentences)
    # Too noisy: no figure at all, neither the paired one nor the medians' ratio.
    wide = TimingEvidence(
        interval=SpeedupInterval(low=0.1, high=3.0, level=0.95, pairs=24, estimate=0.35),
        stopped="max_time",
    )
    noisy = lesson("timing").check(retimed(r, autocast=auto, evidence=wide))
    assert not noisy.graded
    assert re.search(r"\d×", noisy.text) is None, noisy.text


def test_exercise_is_graded_from_the_live_measurement(results):
    r = result_for(results, "plain")
    assert EXERCISE.question.startswith('Under torch.autocast("cpu"), which dtype')
    assert EXERCISE.expected(r) == "bfloat16"
    good = EXERCISE.grade(" torch.bfloat16", r)
    assert good.correct and good.answer == "bfloat16"
    assert "fc1, fc2 and fc3 returned bfloat16" in good.explanation
    bad = EXERCISE.grade("float32", r)
    assert not bad.correct and "the measurement says bfloat16, not float32" in bad.explanation
    # Were autocast to leave the Linear layers in float32, float32 would be the right answer.
    in_float32 = with_autocast_out(r, ["float32"] * 3)
    assert EXERCISE.grade("float32", in_float32).correct is True
    assert EXERCISE.grade("bfloat16", in_float32).correct is False
    odd = with_autocast_out(r, ["float8_e4m3fn"] * 3)
    assert EXERCISE.choices_for(odd)[-1] == "float8_e4m3fn"
    empty = EXERCISE.grade("bfloat16", edited(r, layers=()))
    assert empty.correct is False and "no Linear layers" in empty.explanation


def test_exercise_of_a_run_whose_autocast_forward_raised_is_not_graded(monkeypatch):
    """fc2 was never reached under autocast (its autocast dtypes are None): no answer is
    right, and the window's choices stay the question's own (it catches ValueError)."""
    from tests.autocast_failure import failing_result

    r = failing_result(monkeypatch)
    assert [la.name for la in r.layers if la.autocast is None] == ["refuses", "fc2"]
    grade = EXERCISE.grade("bfloat16", r)
    assert (grade.correct, grade.expected) == (False, "")
    assert grade.explanation == (
        "The autocast forward raised in this run, so there is nothing to grade by."
    )
    with pytest.raises(ValueError, match="autocast forward raised"):
        EXERCISE.choices_for(r)


def test_lesson_6_training_is_graded_against_the_live_run(results):
    result = result_for(results, "training")
    outcome = lesson("training").check(result)
    train = result.train
    assert train is not None and result.config.mode == "train"
    assert outcome.chart == "loss"
    # Graded from the measurement: these hold because they were measured.
    assert outcome.matches_tutorial == (
        train.loss_dtype["autocast"] == "float32"
        and set(train.grad_dtypes.values()) == {"float32"}
        and train.saved_bytes["autocast"] < train.saved_bytes["plain"]
    )
    assert outcome.matches_tutorial
    assert f"{train.saved_bytes['autocast'] / 1e6:.2f} MB" in outcome.headline
    assert f"{train.loss['plain'][-1]:.4f}" in outcome.text


def test_lesson_6_says_so_when_the_run_did_not_train(results):
    inference = result_for(results, "timing")
    outcome = lesson("training").check(inference)
    assert not outcome.matches_tutorial
    assert "switch the mode to Training" in outcome.headline


def test_lesson_6_reports_a_float32_loss_it_did_not_see(results):
    result = result_for(results, "training")
    odd = edited(
        result,
        train=edited(result.train, loss_dtype={"plain": "float32", "autocast": "bfloat16"}),
    )
    outcome = lesson("training").check(odd)
    assert not outcome.matches_tutorial
    assert "the loss came back bfloat16" in outcome.headline


def test_transformer_paths_lesson_is_graded_against_both_live_paths():
    from autocast_explorer.core.learning.lessons import lesson, run_lesson

    item = lesson("transformer-paths")
    small = item.config.replace(d_model=16, heads=2, seq=4, ff=32, batch=2, min_time=0.02)
    run = run_lesson(item, config=small)
    probe = run.probe
    assert probe is not None
    fast, ordinary = probe.path(True), probe.path(False)
    assert fast.fused is True and ordinary.fused is False
    # Measured on torch 2.13 on AVX2 and AMX hosts alike: the fused kernel returns the
    # autocast dtype, the ordinary path's residual add promotes to float32.
    assert (fast.encoder_dtype, ordinary.encoder_dtype) == ("bfloat16", "float32")
    encoder = next(la for la in run.result.layers if la.kind == "TransformerEncoderLayer")
    assert encoder.autocast.out_dtype == fast.encoder_dtype
    outcome = run.outcome
    assert outcome.matches_tutorial is False  # same layer, two dtypes
    assert "took the fused fast path" in outcome.text and "returned float32" in outcome.text
    assert (
        outcome.headline == "The encoder layer's dtype depends on the path: bfloat16 on this one."
    )


def test_a_claim_not_in_the_tutorial_is_called_an_assumption():
    # Lesson 8 once read "The tutorial says: (Not in the tutorial.) …" and then "✓ Here the
    # tutorial's claim holds": a claim the tutorial does not make is an assumption throughout.
    answers = lesson("answers")
    assert answers.claim_by == "assumption"
    assert "tutorial" not in answers.tutorial_claim.lower()
    for item in LESSONS:
        if item.claim_by == "tutorial":
            assert "not in the tutorial" not in item.tutorial_claim.lower(), item.id

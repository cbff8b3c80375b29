"""Every built-in preset's claims and every lesson's sentences, checked against a live run.

Runs each preset's own model at a small size (timing cut to a few blocks) and each lesson.
Claims that torch decides the same way on every CPU kind must hold; the ones that depend on the
CPU (the LSTM's oneDNN kernel, which mode is faster) must come out as this run measured them.
The same file passes under `make test-as-avx2`'s emulation, where bfloat16 is not native.
"""

from __future__ import annotations

import pytest

from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.pace import pace
from autocast_explorer.core.hardware.capabilities import native_support
from autocast_explorer.core.learning.claims import PRESET_CLAIMS, check_claims, preset_claims
from autocast_explorer.core.learning.lessons import LESSONS, run_lesson
from autocast_explorer.core.learning.presets import builtin_presets

PRESETS = {p.id: p for p in builtin_presets()}
#: Claims whose truth depends on the CPU or on timing: asserted against the run, not as facts.
DEPENDS_ON_THE_RUN = {
    "Autocast is slower than float32 here",
    "A CPU without native bfloat16 raises a oneDNN error; one with it returns bfloat16",
    "The softmax head stays in float32 (the tutorial's list)",
}


def quick(config):
    return config.replace(min_time=0.02, threads=1)


def small(config):
    """The preset's own model (layers, widths, dtype, head, fast path) on a batch of 2: which
    dtype a layer returns, which kernel oneDNN picks and whether the fused encoder runs do not
    depend on the batch. Training keeps a batch of 16 for 10 steps: both losses fall, and the
    share of bytes saved for backward is the full preset's (50%). The full sizes took minutes
    where bfloat16 is emulated."""
    size = {"batch": 16, "steps": 10} if config.mode == "train" else {"batch": 2}
    return quick(config).replace(**size)


@pytest.fixture(scope="module")
def results():
    return {pid: run_experiment(small(PRESETS[pid].config)) for pid in PRESET_CLAIMS}


def test_every_listed_preset_is_a_builtin_one():
    assert set(PRESET_CLAIMS) <= set(PRESETS)
    assert preset_claims("no-such-preset") == ()


@pytest.mark.parametrize("preset_id", sorted(PRESET_CLAIMS))
def test_the_presets_claims_against_its_run(results, preset_id):
    result = results[preset_id]
    checks = check_claims(preset_claims(preset_id), result)
    assert [c.text for c in checks] == [c.text for c in PRESET_CLAIMS[preset_id]]
    for check in checks:
        assert check.measured and check.line.endswith(".")
        if check.text in DEPENDS_ON_THE_RUN:
            continue
        assert check.holds is True, f"{preset_id}: {check.text}: {check.measured}"
    by_text = {c.text: c for c in checks}
    slower = by_text.get("Autocast is slower than float32 here")
    if slower is not None:  # by the run's speed call: a run that cannot tell checks nothing
        kind = result.speed_call.kind
        assert slower.holds == {"slower": True, "faster": False, "same": False}.get(kind)
    lstm = by_text.get(next(iter(sorted(DEPENDS_ON_THE_RUN))))
    if preset_id == "lstm":
        lstm = checks[0]
        native = native_support(result.environment.cpu_flags, "bfloat16").native
        if result.autocast_error:
            assert lstm.holds is (not native) and "raised" in lstm.measured
        else:
            outs = {la.autocast.out_dtype for la in result.layers if la.kind == "LSTM"}
            assert lstm.holds is (native and outs == {"bfloat16"})
    if preset_id == "softmax-head":
        head = next(la for la in result.layers if la.kind == "Softmax")
        assert checks[0].holds is (head.autocast.out_dtype == "float32")
        assert head.autocast.out_dtype in checks[0].measured


def test_the_gru_preset_says_what_its_run_shows(results):
    """The description names the GRU's float32 output and its bfloat16 matrix products."""
    preset = PRESETS["gru"]
    gru = next(la for la in results["gru"].layers if la.kind == "GRU")
    assert gru.autocast.out_dtype == "float32"
    assert gru.autocast.compute.count("addmm", "bfloat16") > 0
    assert "returns float32" in preset.description
    assert "run in bfloat16" in preset.description
    assert "leaves the GRU in float32" not in preset.description


@pytest.mark.parametrize("item", LESSONS, ids=[lesson.id for lesson in LESSONS])
def test_every_lesson_sentence_comes_from_its_run(item):
    run = run_lesson(item, quick(item.config))
    outcome = run.outcome
    text = outcome.text
    assert outcome.headline and text.strip()
    # No markup leaks into the sentences, no entity is shown escaped.
    for leak in ("&quot;", "&amp;", "*keeps*", "*follows*", "<b>"):
        assert leak not in text and leak not in item.explanation and leak not in item.try_next
    result = run.result
    if item.id == "timing":
        native = native_support(result.environment.cpu_flags, result.config.dtype).native
        if pace(result.speedup) == "slower" and not native:
            # Nothing was saved by maths that ran emulated: no sentence may say it was.
            assert "time saved by the" not in text
    if item.id == "transformer-paths":
        assert "layer returned encoder1" not in text  # names, then their dtype, said once
        assert "Not in the tutorial" not in item.tutorial_claim


def test_a_run_too_noisy_to_tell_checks_no_speed_claim(results):
    from autocast_explorer.core.experiment.certainty import TimingEvidence
    from autocast_explorer.core.experiment.interval import SpeedupInterval
    from tests.edits import retimed

    pid = next(p for p, claims in PRESET_CLAIMS.items() if any("slower" in c.text for c in claims))
    result = results[pid]
    wide = TimingEvidence(
        interval=SpeedupInterval(low=0.5, high=3.0, level=0.95, pairs=12, estimate=1.2),
        stopped="max_time",
    )
    noisy = retimed(result, evidence=wide)
    assert noisy.speed_call.kind == "noisy"
    check = next(c for c in check_claims(preset_claims(pid), noisy) if "slower" in c.text)
    assert check.holds is None
    assert check.measured == "this run was too noisy to tell which mode was faster"  # no figure

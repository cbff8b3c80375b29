"""The sensitivity locator on the planted faults, and make_plan end to end on scripted timing
(the tester's kit's `timing_noise`: the forwards run, the block times are the test's)."""

from __future__ import annotations

import pytest

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.planning.criterion import parse_criterion
from autocast_explorer.core.planning.search import make_plan, thread_counts
from autocast_explorer.core.planning.sensitivity import first_divergent, locate, ranked
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.core.runtime.progress import Cancelled

FAULTS = "autocast_explorer.examples.planted_faults"
AGREE = parse_criterion("agree>=99%")


def _fault(name: str, dtype: str, **changes: object) -> ExperimentConfig:
    return ExperimentConfig(model=f"{FAULTS}:{name}", dtype=dtype, batch=128, **changes)


def _by_name(rows):
    return {row.name: row for row in rows}


def test_the_float16_overflow_is_named_first_and_keeping_it_alone_restores_agreement() -> None:
    rows = locate(_fault("float16_overflow", "float16"), AGREE)
    assert [row.name for row in rows] == ["embed", "amplify", "norm", "head"]
    assert first_divergent(rows, AGREE) == "amplify"
    assert ranked(rows, AGREE)[0].name == "amplify"
    found = _by_name(rows)
    assert found["amplify"].one_in < 90
    assert found["amplify"].leave_out >= 99
    assert all(found[name].one_in >= 99 for name in ("embed", "norm", "head"))
    assert all(found[name].leave_out < 90 for name in ("embed", "norm", "head"))
    for row in rows:
        assert 0 <= row.time_share_plain <= 1 and 0 <= row.time_share_lower <= 1


def test_the_bfloat16_offset_is_named_and_keeping_it_restores_agreement() -> None:
    rows = locate(_fault("bfloat16_offset", "bfloat16"), "agree>=99%")
    assert first_divergent(rows, AGREE) == "shift"
    found = _by_name(rows)
    assert found["shift"].one_in < 60
    assert found["shift"].leave_out >= 99


def test_sqnr_is_measured_in_db_and_identical_rows_read_as_the_ceiling() -> None:
    sqnr = parse_criterion("sqnr>=30")
    found = _by_name(locate(_fault("bfloat16_offset", "bfloat16"), sqnr))
    assert found["shift"].one_in < 10  # the signal is gone: noise as large as it
    assert 30 < found["head"].one_in < 150
    assert found["shift"].leave_out > found["embed"].leave_out


def test_a_cancel_stops_the_locator_within_one_row() -> None:
    started: list[str] = []

    def progress(fraction: float, message: str) -> None:
        if message.startswith("lowering "):
            started.append(message)

    with pytest.raises(Cancelled):
        locate(
            _fault("float16_overflow", "float16"),
            AGREE,
            progress=progress,
            cancel=lambda: len(started) >= 1,
        )
    assert len(started) == 1


def test_agreement_needs_class_logits() -> None:
    config = ExperimentConfig(
        model="autocast_explorer.examples.my_model:build",
        model_args=(("classes", 1),),
        batch=4,
        input_image=8,
    )
    with pytest.raises(ConfigError, match=r"agree needs batch × classes logits.*use sqnr"):
        locate(config, AGREE)


def test_accuracy_drop_needs_real_data() -> None:
    with pytest.raises(ConfigError, match="accuracy-drop needs real data"):
        make_plan(ExperimentConfig(), "accuracy-drop<=0.5", 10)


def test_thread_counts_run_in_powers_of_two_up_to_the_free_cores() -> None:
    assert thread_counts(1) == (1,)
    assert thread_counts(6) == (1, 2, 4, 6)
    assert thread_counts(8) == (1, 2, 4, 8)


def _tiny_fault() -> ExperimentConfig:
    return _fault("float16_overflow", "float16", min_time=0.02, threads=1)


def test_make_plan_keeps_the_overflowing_layer_when_lower_precision_is_faster(
    timing_noise,
) -> None:
    timing_noise.clear(2.0)
    plan = make_plan(_tiny_fault(), AGREE, 30, routes=("eager",))
    assert plan.outcome == "plan"
    assert (plan.chosen.route, plan.chosen.dtype) == ("eager", "float16")
    assert plan.chosen.keep_float32 == ("amplify",)
    assert plan.chosen.criterion_value >= 99
    assert 1.8 < plan.chosen.speedup_interval.estimate < 2.2
    assert plan.first_divergent == "amplify"
    nothing_kept = [c for c in plan.candidates if c.dtype == "float16" and not c.keep_float32]
    assert nothing_kept[0].met is False and nothing_kept[0].why_not.startswith("agree ")
    assert "keep_float32(model.get_submodule(name))" in plan.snippet
    assert plan.spent_s <= 30 * 1.3


def test_make_plan_says_float32_is_fastest_when_everything_lower_is_slower(timing_noise) -> None:
    timing_noise.clear(0.5)
    plan = make_plan(_tiny_fault(), AGREE, 30, routes=("eager",))
    assert plan.outcome == "float32"
    assert (plan.chosen.route, plan.chosen.dtype, plan.chosen.threads) == ("eager", "float32", 1)
    lowered = [c for c in plan.candidates if c.dtype != "float32" and c.met]
    assert lowered and all(c.why_not.startswith("slower than eager float32") for c in lowered)


def test_make_plan_finds_no_plan_for_a_criterion_only_float32_meets(timing_noise) -> None:
    timing_noise.clear(2.0)
    plan = make_plan(_tiny_fault(), "sqnr>=149", 30, routes=("eager",))
    assert plan.outcome == "none"
    assert plan.chosen.dtype != "float32" and plan.chosen.speedup_interval is None
    assert plan.chosen.criterion_value < 149
    assert "does NOT meet the criterion" in plan.snippet


@pytest.mark.compile
@pytest.mark.slow
def test_make_plan_compiles_its_candidates_with_their_keep_sets(timing_noise) -> None:
    timing_noise.clear(2.0)
    plan = make_plan(_tiny_fault(), AGREE, 120, routes=("eager", "compiled"))
    compiled = {(c.dtype, c.keep_float32): c for c in plan.candidates if c.route == "compiled"}
    assert compiled[("float32", ())].met
    kept = compiled[("float16", ("amplify",))]
    assert kept.met and kept.criterion_value >= 99
    assert kept.speedup_interval is not None


def _subject_and_judge(config: ExperimentConfig):
    from autocast_explorer.core.planning.sensitivity import judge_for
    from autocast_explorer.core.planning.subject import prepare_subject
    from autocast_explorer.core.runtime.progress import Reporter

    subject = prepare_subject(config, Reporter())
    return subject, judge_for(subject, AGREE)


def test_leave_outs_stop_once_the_budget_s_share_for_them_is_spent() -> None:
    """A fake budget: 90%, 70%, 60% and 50% of it left as the four rows are measured."""
    import torch

    from autocast_explorer.core.planning.sensitivity import LEAVE_OUT_SHARE, measure_rows
    from autocast_explorer.core.runtime.progress import Reporter

    subject, judge = _subject_and_judge(_fault("float16_overflow", "float16"))
    shares = iter([0.9, 0.7, 0.6, 0.5])
    with torch.no_grad():
        found = measure_rows(
            subject, judge, torch.float16, Reporter(), share_left=lambda: next(shares)
        )
    assert LEAVE_OUT_SHARE == 0.6
    leave_outs = {row: kept.finite for row, _single, kept in found}
    assert leave_outs["embed"] is not None and leave_outs["amplify"] >= 99
    assert leave_outs["norm"] is not None  # 0.6 left: still measured
    assert leave_outs["head"] is None  # 0.5 left: the search needs the rest
    assert all(single.finite is not None for _row, single, _kept in found)  # one-ins: every row


def test_the_user_s_kept_layers_stay_float32_while_the_rows_are_measured() -> None:
    """With `amplify` kept by the user nothing overflows: every other row lowered alone or all
    together agrees, and amplify's own measures are float32's."""
    import torch

    from autocast_explorer.core.planning.sensitivity import sensitivity_rows
    from autocast_explorer.core.runtime.progress import Reporter

    config = _fault("float16_overflow", "float16", keep_float32=("amplify",))
    subject, judge = _subject_and_judge(config)
    assert subject.kept == ("amplify",)
    assert subject.free_layers == ("embed", "norm", "head")
    with torch.no_grad():
        rows = _by_name(sensitivity_rows(subject, judge, torch.float16, Reporter()))
    assert (rows["amplify"].one_in, rows["amplify"].leave_out) == (100.0, 100.0)
    assert all(rows[name].leave_out >= 99 for name in ("embed", "norm", "head"))
    assert all(rows[name].one_in >= 99 for name in ("embed", "norm", "head"))
    assert "forward" not in subject.model.get_submodule("amplify").__dict__  # given back


def test_a_keep_pattern_that_names_no_layer_is_refused_before_the_search() -> None:
    config = _fault("float16_overflow", "float16", keep_float32=("amplfy",))
    with pytest.raises(ConfigError) as refused:
        make_plan(config, AGREE, 30, routes=("eager",))
    assert str(refused.value).startswith("keep_float32: 'amplfy' matches no layer; nearest: ")
    assert "amplify" in str(refused.value)


def test_on_real_data_the_flipped_examples_are_counted() -> None:
    """Five held-out rows (a sixth is padding): rows 1 and 3 change class, row 4's NaN logit
    never wins (its finite argmax stays), the padding row's change is not counted."""
    import math

    import numpy as np
    import torch

    from autocast_explorer.core.planning.judge import Judge

    reference = torch.tensor([[2.0, 1, 0], [0, 3, 1], [1, 0, 0], [0, 0, 5], [4, 1, 0], [1, 0, 0]])
    lowered = reference.clone()
    lowered[1] = torch.tensor([0, 1, 3.0])
    lowered[3] = torch.tensor([6.0, 0, 5])
    lowered[4] = torch.tensor([4.0, math.nan, 0])
    lowered[5] = torch.tensor([0, 9.0, 0])
    labels = np.array([0, 1, 0, 2, 0])
    judge = Judge(parse_criterion("accuracy-drop<=50"), [reference], labels, rows=5)
    measured = judge.measure([lowered])
    assert (measured.flips, measured.held_out) == (2, 5)
    assert measured.value == pytest.approx(40.0)  # 5 of 5 right, then 3 of 5
    synthetic = Judge(AGREE, [reference]).measure([lowered])
    assert synthetic.flips is None  # no held-out rows: nothing counted

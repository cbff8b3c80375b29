"""A plan in words: the outcome sentence of each outcome, the candidates' cells, the rows in order
of damage and what is wrong with a criterion typed."""

from __future__ import annotations

import math

import pytest

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.pace import bounds_text
from autocast_explorer.core.planning.criterion import parse_criterion
from autocast_explorer.core.planning.document import PlanFlips, SensitivityRow
from autocast_explorer.core.planning.summary import format_plan
from autocast_explorer.core.planning.words import (
    best_lower,
    candidate_cells,
    criterion_problem,
    outcome_sentence,
    ranked_rows,
    search_summary,
    value_text,
)
from tests.plan_documents import candidate, interval, plan_of

SENTENCES = {
    "plan": (
        "Run compiled bfloat16 on 2 threads, keeping fc2 in float32: speedup 2.90× "
        "(95%: 2.70–3.10) against float32 eager, with agreement 99.80% (agree>=99.5% holds)."
    ),
    "float32": (
        "float32 is fastest here: run compiled float32 on 2 threads, speedup 2.48× "
        "(95%: 2.30–2.60) against float32 eager. The best lower-precision candidate, compiled "
        "bfloat16 on 2 threads, keeping fc2 in float32, reached 2.20× (95%: 2.00–2.50)."
    ),
    "none": (
        "No plan meets agree>=99.5%: the closest, eager bfloat16 on 1 thread, reached 97.50%, "
        "speedup 0.14× (95%: 0.12–0.16)."
    ),
}


@pytest.mark.parametrize("outcome", ["plan", "float32", "none"])
def test_each_outcome_has_its_sentence_with_the_chosen_interval(outcome: str) -> None:
    assert outcome_sentence(plan_of(outcome)) == SENTENCES[outcome]


def test_float32_names_the_best_lower_candidate_even_when_it_missed() -> None:
    plan = plan_of("float32")
    missed = tuple(c.model_copy(update={"met": False}) for c in plan.candidates)
    plan = plan.model_copy(update={"candidates": missed})
    best = best_lower(plan)
    assert best is not None and best.speedup_interval is not None
    assert best.speedup_interval.estimate == 2.2  # faster than eager bfloat16's 0.14, also missed
    assert outcome_sentence(plan).endswith(
        "reached 2.20× (95%: 2.00–2.50), and missed agree>=99.5%."
    )
    alone = plan.model_copy(update={"candidates": plan.candidates[:2]})
    assert best_lower(alone) is None
    assert outcome_sentence(alone).endswith("No lower-precision candidate could be timed.")


def test_an_unchanged_lower_dtype_is_no_lower_precision_and_its_edges_read_apart() -> None:
    """Implicit bfloat16 on a CPU without bf16 maths: its answers float32's bit for bit, its
    interval so close to 1 that two decimals would print it "1.00–1.00"."""
    plan = plan_of("float32")
    unchanged = candidate(
        "implicit", "bfloat16", 2, (), interval(0.9982, 1.0031, 1.0006), 100.0, True
    ).model_copy(update={"identical_to_float32": True})
    alone = plan.model_copy(update={"candidates": (*plan.candidates[:2], unchanged)})
    assert best_lower(alone) is None
    assert outcome_sentence(alone).endswith("No lower-precision candidate could be timed.")
    cells = candidate_cells(unchanged, parse_criterion(plan.criterion))
    assert cells[1] == "1.00× (0.998–1.003)"
    text = format_plan(alone)
    assert "the best lower precision" not in text
    assert "implicit bfloat16 ×2: 1.00× (95%: 0.998–1.003)" in text


@pytest.mark.parametrize(
    ("low", "high", "text"),
    [
        (1.21, 1.33, "1.21–1.33"),
        (0.998, 1.003, "0.998–1.003"),
        (0.99996, 1.00004, "0.99996–1.00004"),
        (0.0024, 0.0026, "0.0024–0.0026"),
        (0.00241, 0.00244, "0.00241–0.00244"),
        (1.0, 1.0, "1.00–1.00"),  # equal edges are told as they are
    ],
)
def test_an_interval_s_edges_get_the_digits_that_tell_them_apart(low, high, text) -> None:
    assert bounds_text(low, high) == text


def test_the_flipped_examples_of_a_plan_on_real_data_are_said() -> None:
    plan = plan_of("plan", criterion="accuracy-drop<=0.5")
    chosen = plan.chosen.model_copy(
        update={"criterion_value": 0.28, "flipped": PlanFlips(count=3, held_out=360)}
    )
    plan = plan.model_copy(update={"chosen": chosen})
    assert outcome_sentence(plan).endswith(
        "with an accuracy drop of 0.28 points (accuracy-drop<=0.5 holds); 3 of 360 held-out "
        "examples flipped."
    )
    assert "; accuracy-drop 0.28 points; 3 of 360 held-out examples flipped" in format_plan(plan)


def test_a_candidate_fills_every_column_in_core_s_words() -> None:
    plan = plan_of("plan")
    criterion = parse_criterion(plan.criterion)
    assert [candidate_cells(c, criterion) for c in plan.candidates] == [
        (
            "eager float32 on 1 thread",
            "1× (float32 eager itself)",
            "100.00%",
            "yes",
            "",
            "the reference",
        ),
        ("compiled float32 on 2 threads", "2.48× (2.30–2.60)", "100.00%", "yes", "", "—"),
        (
            "eager bfloat16 on 1 thread",
            "0.14× (0.12–0.16)",
            "97.50%",
            "no",
            "",
            "agree 97.50% < 99.5%",
        ),
        (
            "compiled bfloat16 on 2 threads, keeping fc2 in float32",
            "2.90× (2.70–3.10)",
            "99.80%",
            "yes",
            "≈ 126 MB",
            "—",
        ),
    ]
    assert search_summary(plan) == "4 candidates timed in 41.5 s of a 60 s budget."


def test_rows_come_most_damaging_first_whichever_way_the_measure_points() -> None:
    assert [r.name for r in ranked_rows(plan_of("plan"))] == ["fc2", "fc1", "fc3", "relu"]
    rows = (
        SensitivityRow(name="a", one_in=0.1),
        SensitivityRow(name="b", one_in=2.5),
        SensitivityRow(name="c", one_in=None),
        SensitivityRow(name="d", one_in=0.7),
    )
    drop = plan_of("none", criterion="accuracy-drop<=0.5").model_copy(update={"sensitivity": rows})
    assert [r.name for r in ranked_rows(drop)] == ["b", "d", "a", "c"]  # the largest drop first
    sqnr = drop.model_copy(update={"criterion": "sqnr>=40"})
    assert [r.name for r in ranked_rows(sqnr)] == ["a", "d", "b", "c"]  # the lowest SQNR first


@pytest.mark.parametrize(
    ("criterion", "value", "text"),
    [
        ("agree>=99%", 99.125, "99.12%"),
        ("sqnr>=40", 41.26, "41.3 dB"),
        ("sqnr>=40", math.inf, "∞ dB (identical)"),
        ("accuracy-drop<=0.5", 0.3, "0.30 points"),
        ("agree>=99%", None, "not measured"),
        ("sqnr>=40", math.nan, "not measured"),
    ],
)
def test_values_are_written_in_the_criterion_s_unit(criterion, value, text) -> None:
    assert value_text(parse_criterion(criterion), value) == text


def test_a_criterion_typed_is_checked_against_the_config() -> None:
    synthetic, digits = ExperimentConfig(), ExperimentConfig(data="digits")
    assert criterion_problem("agree>=99.5%", synthetic) == ""
    assert criterion_problem("agree>99", synthetic).startswith("criterion 'agree>99': expected")
    refused = criterion_problem("accuracy-drop<=0.5", synthetic)
    assert refused.startswith("accuracy-drop needs real data")
    assert criterion_problem("accuracy-drop<=0.5", digits) == ""
    assert criterion_problem("accuracy-drop<=0.5", None) == ""  # the config's fault, said apart

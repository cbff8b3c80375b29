"""The plan's criterion and its document, read back strictly."""

from __future__ import annotations

import math

import pytest

from autocast_explorer.core.documents.reader import DocumentFormatError
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.hardware.cpu import environment
from autocast_explorer.core.planning.criterion import CriterionError, parse_criterion
from autocast_explorer.core.planning.document import (
    PlanCandidate,
    PlanChoice,
    PlanDocument,
    SensitivityRow,
    SpeedupInterval,
)


@pytest.mark.parametrize(
    ("text", "measure", "threshold", "shown"),
    [
        ("agree>=99.5%", "agree", 99.5, "agree>=99.5%"),
        (" SQNR >= 40 ", "sqnr", 40.0, "sqnr>=40"),
        ("accuracy-drop<=0.5", "accuracy-drop", 0.5, "accuracy-drop<=0.5"),
    ],
)
def test_criteria_read(text: str, measure: str, threshold: float, shown: str) -> None:
    criterion = parse_criterion(text)
    assert (criterion.measure, criterion.threshold, str(criterion)) == (measure, threshold, shown)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("agree>99", "expected one of accuracy-drop<=N, agree>=N, sqnr>=N"),
        ("speed>=2", "unknown measure 'speed'"),
        ("agree<=99", "agree takes >="),
        ("sqnr>=40%", "only agree is in percent"),
        ("agree>=101%", "at most 100%"),
    ],
)
def test_a_criterion_that_cannot_be_read_says_why(text: str, words: str) -> None:
    with pytest.raises(CriterionError, match=words):
        parse_criterion(text)


def test_an_interval_meets_a_criterion_only_whole() -> None:
    drop = parse_criterion("accuracy-drop<=0.5")
    assert drop.needs_data
    assert drop.met(0.2, low=-0.1, high=0.4)
    assert not drop.met(0.2, low=-0.1, high=0.7)  # the interval reaches past 0.5 points
    agree = parse_criterion("agree>=99%")
    assert agree.met(99.0) and not agree.met(98.9) and not agree.met(math.nan)


def test_a_plan_is_written_and_read_back() -> None:
    choice = PlanChoice(
        route="compiled",
        dtype="bfloat16",
        threads=2,
        keep_float32=("encoder.norm",),
        speedup_interval=SpeedupInterval(low=1.1, high=1.3, estimate=1.2),
        criterion_value=99.8,
    )
    plan = PlanDocument(
        config=ExperimentConfig(),
        environment=environment(),
        outcome="plan",
        criterion="agree>=99.5%",
        chosen=choice,
        candidates=(PlanCandidate(**choice.model_dump(), met=True),),
        sensitivity=(SensitivityRow(name="encoder.norm", one_in=97.0, leave_out=99.9),),
        first_divergent="encoder.norm",
        snippet="import torch\n",
        budget_s=60.0,
        spent_s=41.5,
    )
    again = PlanDocument.from_json(plan.to_json())
    assert again == plan
    assert again.chosen.speedup_interval == SpeedupInterval(low=1.1, high=1.3, estimate=1.2)


def test_a_plan_with_an_unknown_outcome_is_refused_by_name() -> None:
    plan = PlanDocument(
        config=ExperimentConfig(),
        environment=environment(),
        outcome="float32",
        criterion="sqnr>=40",
        chosen=PlanChoice(route="eager", dtype="float32", threads=1),
        budget_s=1.0,
        spent_s=0.5,
    )
    text = plan.to_json().replace('"float32",\n  "criterion"', '"faster",\n  "criterion"')
    with pytest.raises(DocumentFormatError, match="plan: outcome"):
        PlanDocument.from_json(text)

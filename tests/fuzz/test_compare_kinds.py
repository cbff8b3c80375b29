"""Results of every kind side by side: MLP, CNN, transformer and RNN runs, a training run whose
loss diverged to NaN, and a run whose autocast forward raised. Every pair (and every kind with
itself) goes through compare (core and `compare` on files), the report and the Compare window,
and every saved file reads back: no KeyError, no refusal of a file the program wrote.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import pytest

from autocast_explorer.cli import main
from autocast_explorer.core.experiment.certainty import SPEEDUP_MEANING
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.experiment.summary import format_summary
from autocast_explorer.core.learning.compare import (
    compare_results,
    comparison_table,
    format_comparison,
    load_comparison,
)
from autocast_explorer.core.reports.report import report_markdown
from tests.autocast_failure import MESSAGE, failing_result

TINY = {"batch": 2, "min_time": 0.01, "threads": 1}
CONFIGS = {
    "mlp": ExperimentConfig(widths=(8, 6, 4), **TINY),
    "cnn": ExperimentConfig(model="cnn", channels=(3, 4), image=8, classes=4, **TINY),
    "transformer": ExperimentConfig(
        model="transformer", d_model=8, heads=2, seq=4, depth=1, ff=16, classes=4, **TINY
    ),
    "rnn": ExperimentConfig(model="rnn", features=4, hidden=8, seq=4, depth=1, classes=4, **TINY),
    "diverged": ExperimentConfig(
        widths=(16, 16, 4), mode="train", steps=20, lr=100.0, **{**TINY, "batch": 8}
    ),
}
KINDS = [*CONFIGS, "raised"]


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, tuple[ExperimentResult, Path]]:
    folder = tmp_path_factory.mktemp("kinds")
    made = {name: run_experiment(config) for name, config in CONFIGS.items()}
    with pytest.MonkeyPatch.context() as patch:
        made["raised"] = failing_result(patch)
    out = {}
    for name, result in made.items():
        path = folder / f"{name}.json"
        path.write_text(result.to_json())
        out[name] = (result, path)
    return out


def test_the_diverged_run_really_diverged(results):
    train = results["diverged"][0].train
    assert train is not None
    assert any(not math.isfinite(x) for x in train.loss["plain"])
    data = json.loads(results["diverged"][1].read_text())
    assert None in data["train"]["loss"]["plain"]  # written as null, the schema's form


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_reads_back_what_it_wrote(results, kind):
    result, path = results[kind]
    (again,) = load_comparison([path]).runs
    assert again.result.config == result.config
    if result.train is not None:
        for mode in ("plain", "autocast"):
            old, new = result.train.loss[mode], again.result.train.loss[mode]
            assert len(old) == len(new)
            assert all(
                a == b or (math.isnan(a) and math.isnan(b)) for a, b in zip(old, new, strict=True)
            )
        assert again.result.train.divergence() == result.train.divergence() != ""
    assert again.result.autocast_error == result.autocast_error


PAIRS = list(itertools.combinations_with_replacement(KINDS, 2))


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[f"{a}+{b}" for a, b in PAIRS])
def test_every_pair_compares(results, a, b):
    ra, rb = results[a][0], results[b][0]
    comparison = compare_results([ra, rb], [f"{a}.json", f"{b}.json"])
    table = comparison_table(comparison)
    assert all(len(values) == 2 for _, values in table)
    text = format_comparison(comparison)
    differences = comparison.config_differences()
    if ra.config.model != rb.config.model:
        assert "model" in differences
        assert "Note: the configs differ in" in text
    if "diverged" in (a, b):
        row = dict(table)["diverged at step"]
        column = [a, b].index("diverged")
        assert row[column] != "no / no"
    if "raised" in (a, b):
        column = [a, b].index("raised")
        assert dict(table)["autocast median"][column].startswith("raised: RuntimeError")


@pytest.mark.parametrize(("a", "b"), PAIRS[:: max(1, len(PAIRS) // 7)])
def test_compare_on_files_prints_one_table(results, capsys, a, b):
    assert main(["compare", str(results[a][1]), str(results[b][1])]) == 0
    out, err = capsys.readouterr()
    assert err == "" and f"speedup = {SPEEDUP_MEANING}" in out


@pytest.mark.parametrize("kind", KINDS)
def test_summary_and_report_of_every_kind(results, kind):
    result = results[kind][0]
    summary = format_summary(result)
    markdown = report_markdown(result)
    if kind == "diverged":
        assert "The run diverged: the loss became NaN or infinite" in summary
        assert "The run diverged" in markdown
    else:
        assert "diverged" not in summary
    if kind == "raised":
        assert MESSAGE in summary


def test_the_compare_window_takes_every_kind_side_by_side(qtbot, results):
    from autocast_explorer.gui.features.compare.window import CompareWindow

    window = CompareWindow()
    qtbot.addWidget(window)
    errors = window.add_files([str(path) for _result, path in results.values()])
    assert errors == []
    assert len(window.labels()) == len(KINDS)
    rows = dict((row[0], row[1:]) for row in window.table_rows())
    assert rows["model"][KINDS.index("cnn")].startswith("CNN")
    assert "model" in window.config_differences()
    # The same run again is listed once (and named as a repeat); another run still joins.
    assert window.add_files([str(results["mlp"][1])]) == []
    assert len(window.labels()) == len(KINDS)
    other = results["mlp"][0].model_copy(update={"created": "another run"})
    window.add_result(other, "another")
    assert len(window.labels()) == len(KINDS) + 1
    window.close()


def _lesson_ids() -> list[str]:
    from autocast_explorer.core.learning.lessons import LESSONS

    return [lesson.id for lesson in LESSONS if lesson.checker is not None]


@pytest.mark.parametrize("lesson_id", _lesson_ids())
@pytest.mark.parametrize("kind", KINDS)
def test_every_lesson_check_reads_every_kind(results, kind, lesson_id):
    """A lesson's check given another kind of result (a learner's own run) says something."""
    from autocast_explorer.core.learning.lessons import lesson

    outcome = lesson(lesson_id).check(results[kind][0], None)
    assert outcome.lesson_id == lesson_id and outcome.headline.endswith(".")
    if kind == "raised":
        assert "autocast forward raised" in outcome.headline and not outcome.matches_tutorial
        assert MESSAGE in outcome.text

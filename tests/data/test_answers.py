"""Held-out answers compared: accuracies, flipped rows with margins, the paired bootstrap."""

import numpy as np

from autocast_explorer.core.data.answers import (
    AccuracyReport,
    compare_answers,
    margins,
    paired_bootstrap,
)
from autocast_explorer.core.documents.model import dump, read
from tests.edits import edited


def _logits(preds, classes=3, top=2.0, second=1.0):
    out = np.zeros((len(preds), classes), dtype=np.float32)
    for i, p in enumerate(preds):
        out[i] = 0.0
        out[i, (p + 1) % classes] = second
        out[i, p] = top
    return out


def test_flipped_rows_carry_both_answers_margins_and_their_file_index():
    labels = np.array([0, 1, 2, 0])
    plain = _logits([0, 1, 2, 1])
    auto = _logits([0, 2, 2, 0], top=3.0, second=0.5)
    rows = np.arange(8, dtype=np.float32).reshape(4, 2)
    acc = compare_answers(
        labels, plain, auto, "bfloat16", 0, rows=rows, index=np.array([5, 9, 11, 40])
    )
    assert acc.plain == 0.75 and acc.autocast == 0.75 and acc.rows == 4
    assert acc.flipped_total == 2
    first, second = acc.flipped
    assert (first.index, first.label, first.plain, first.autocast) == (9, 1, 1, 2)
    assert (first.plain_margin, first.autocast_margin) == (1.0, 2.5)
    assert first.x == (2.0, 3.0)
    assert (second.index, second.label, second.plain, second.autocast) == (40, 0, 1, 0)
    assert acc.confusion() == {(1, 2): 1, (1, 0): 1}


def test_the_interval_is_zero_wide_when_no_answer_changed_correctness():
    right = np.array([True, False, True, True])
    assert paired_bootstrap(right, right, 0) == (0.0, 0.0)


def test_the_interval_is_paired_seeded_and_covers_the_difference():
    rng = np.random.default_rng(1)
    plain = rng.random(400) < 0.9
    auto = plain.copy()
    auto[:20] = ~auto[:20]  # 20 answers changed correctness
    low, high = paired_bootstrap(plain, auto, 3)
    diff = auto.mean() - plain.mean()
    assert low <= diff <= high and low < high
    assert (low, high) == paired_bootstrap(plain, auto, 3)
    # Paired: a constant shift of every row's correctness gives that shift exactly.
    assert paired_bootstrap(np.zeros(50, bool), np.ones(50, bool), 0) == (1.0, 1.0)


def test_margins_are_top_minus_runner_up_and_nonfinite_logits_do_not_leak():
    assert margins(np.array([[1.0, 4.0, 2.5]])).tolist() == [1.5]
    labels = np.array([1, 0])
    plain = np.array([[0.0, 1.0], [1.0, 0.0]], dtype=np.float32)
    auto = np.array([[np.nan, 1.0], [np.inf, np.inf]], dtype=np.float32)
    acc = compare_answers(labels, plain, auto, "float16", 0)
    assert acc.autocast == 1.0 and all(np.isfinite(f.autocast_margin) for f in acc.flipped)


def test_the_report_round_trips_through_its_reader():
    labels = np.array([0, 1, 2, 0])
    acc = compare_answers(labels, _logits([0, 1, 2, 1]), _logits([0, 2, 2, 0]), "float16", 0)
    data = dump(acc)
    again = read(AccuracyReport, data, "accuracy")
    assert again == acc
    assert set(data) >= {"plain", "autocast", "flipped", "interval"}
    assert set(data["flipped"][0]) == {
        "index",
        "label",
        "plain",
        "autocast",
        "plain_margin",
        "autocast_margin",
    }


def test_report_and_compare_carry_the_accuracy(tmp_path):

    from autocast_explorer.core.data.records import DataInfo
    from autocast_explorer.core.experiment.engine import run_experiment
    from autocast_explorer.core.learning.compare import compare_results, comparison_table
    from autocast_explorer.core.reports.report import report_markdown
    from autocast_explorer.testing.configs import tiny_experiment

    synthetic = run_experiment(tiny_experiment())
    labels = np.array([0, 1, 2, 0])
    acc = compare_answers(labels, _logits([0, 1, 2, 1]), _logits([0, 2, 2, 0]), "bfloat16", 0)
    info = DataInfo(
        name="digits", n_train=10, n_test=4, classes=3, shape=(1, 8, 8), image=True, epochs=2
    )
    real = edited(synthetic, data=info, accuracy=acc)
    text = report_markdown(real)
    assert "## Held-out accuracy on real data" in text
    assert "- float32: 75.00% of 4 held-out rows" in text and "| 1 | 1 | 1 | 1 | 2 | 1 |" in text
    assert "## Held-out accuracy" not in report_markdown(synthetic)
    table = dict(comparison_table(compare_results([synthetic, real], ["a.json", "b.json"])))
    assert table["data"] == ["synthetic", "digits"]
    assert table["accuracy float32"] == ["—", "75.00%"]
    assert table["rows flipped"] == ["—", "2/4"]

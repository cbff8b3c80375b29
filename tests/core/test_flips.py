"""Top-k agreement, flipped rows and the flip-rate-by-margin bins on constructed logits."""

import itertools

import pytest
import torch

from autocast_explorer.core.experiment.agreement import compare_logits
from autocast_explorer.core.numerics.flips import (
    Flip,
    MarginBin,
    TopK,
    flip_rate_by_margin,
    flipped_rows,
    margins,
    topk_agreement,
)

# 20 rows whose float32 winner (class 0) leads class 1 by 0.015, 0.025, … 0.205, in a shuffled
# row order. "autocast" moves 0.05 from class 0 to class 1, so exactly the rows with margin
# below 0.1 flip to class 1.
MARGINS = [0.015 + 0.01 * i for i in range(20)]
ORDER = [7, 0, 19, 3, 12, 5, 16, 9, 1, 14, 10, 2, 18, 6, 11, 4, 15, 8, 13, 17]


def constructed():
    plain = torch.zeros(20, 4)
    for row, i in enumerate(ORDER):
        plain[row] = torch.tensor([MARGINS[i], 0.0, -1.0, -2.0])
    auto = plain.clone()
    auto[:, 0] -= 0.05
    auto[:, 1] += 0.05
    return plain, auto


def test_flipped_rows_list_rows_classes_and_margins():
    plain, auto = constructed()
    flips = flipped_rows(plain, auto)
    expected_rows = [row for row, i in enumerate(ORDER) if MARGINS[i] < 0.1]
    assert [f.row for f in flips] == expected_rows == [0, 1, 3, 5, 8, 11, 13, 15, 17]
    assert all((f.plain_class, f.autocast_class) == (0, 1) for f in flips)
    for f in flips:
        assert f.margin == pytest.approx(MARGINS[ORDER[f.row]], abs=1e-7)
    assert flipped_rows(plain, auto, limit=3) == flips[:3]


def test_flip_rate_by_margin_shows_flips_at_small_margins():
    plain, auto = constructed()
    bins = flip_rate_by_margin(plain, auto, bins=10)
    assert [b.rows for b in bins] == [2] * 10
    assert [b.rate for b in bins] == [1, 1, 1, 1, 0.5, 0, 0, 0, 0, 0]
    assert bins[0].low == pytest.approx(0.015, abs=1e-7)
    assert bins[-1].high == pytest.approx(0.205, abs=1e-7)
    assert all(a.high <= b.low for a, b in itertools.pairwise(bins))
    # Fewer rows than bins: one bin per row.
    assert len(flip_rate_by_margin(plain[:3], auto[:3], bins=10)) == 3


def test_margins_are_top1_minus_top2():
    logits = torch.tensor([[1.0, 3.0, 2.5], [4.0, 4.0, 0.0]])
    assert margins(logits).tolist() == [0.5, 0.0]
    assert margins(torch.tensor([[2.0], [3.0]])).tolist() == [0.0, 0.0]


def test_topk_contains_and_overlap():
    plain = torch.tensor([[5.0, 4.0, 3.0, 2.0, 1.0]])
    auto = torch.tensor([[1.0, 5.0, 4.0, 3.0, 2.0]])
    # float32 top-1 is class 0; autocast's top 2 is {1, 2}, its top 5 holds every class.
    assert topk_agreement(plain, auto, 2) == TopK(k=2, contains=0, fraction=0.0, overlap=0.5)
    assert topk_agreement(plain, auto, 3) == TopK(k=3, contains=0, fraction=0.0, overlap=2 / 3)
    assert topk_agreement(plain, auto, 10) == TopK(k=5, contains=1, fraction=1.0, overlap=1.0)


def test_compare_logits_carries_the_deeper_agreement():
    plain, auto = constructed()
    a = compare_logits(plain, auto, atol=0.01, rtol=0.0, topk=2)
    assert (a.rows, a.agree) == (20, 11)
    assert len(a.flips) == a.rows - a.agree
    assert a.topk == TopK(k=2, contains=20, fraction=1.0, overlap=1.0)
    assert [b.flips for b in a.margin_bins] == [2, 2, 2, 2, 1, 0, 0, 0, 0, 0]
    assert a.allclose is False and a.max_abs_diff == pytest.approx(0.05)
    assert compare_logits(plain, auto, atol=0.06, rtol=0.0).allclose is True


def test_json_forms_round_trip():
    f = Flip(row=3, plain_class=0, autocast_class=1, margin=0.25)
    assert Flip.from_dict(f.to_dict()) == f
    assert f.to_dict() == {"row": 3, "plain": 0, "autocast": 1, "margin": 0.25}
    b = MarginBin(low=0.0, high=0.5, rows=4, flips=1)
    assert b.to_dict()["rate"] == 0.25
    assert MarginBin.from_dict(b.to_dict()) == b
    t = TopK(k=5, contains=7, fraction=0.875, overlap=0.9)
    assert TopK.from_dict(t.to_dict()) == t

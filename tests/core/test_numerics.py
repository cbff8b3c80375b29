"""Per-layer error metrics against hand-computed tensors."""

import math

import pytest
import torch

from autocast_explorer.core.numerics import layer_error as numerics
from autocast_explorer.core.numerics.layer_error import LayerError, layer_error


def test_metrics_of_a_hand_computed_pair():
    # ref = [1, 2, 3, 4], low = [1, 2, 3, 5]: one error of 1.
    e = layer_error(torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([1.0, 2.0, 3.0, 5.0]))
    assert e.max_abs == 1.0
    assert e.mean_abs == 0.25
    # mean|diff| / mean|ref| = 0.25 / 2.5
    assert e.mean_rel == pytest.approx(0.1, rel=1e-15)
    # mean(ref²) = 30/4, mean(diff²) = 1/4 → 10·log10(30)
    assert e.sqnr_db == pytest.approx(14.771212547196624, rel=1e-15)
    # (1+4+9+20) / (√30·√39)
    assert e.cosine == pytest.approx(34 / math.sqrt(30 * 39), rel=1e-15)
    assert (e.identical, e.numel, e.nonfinite) == (False, 4, 0)


def test_bfloat16_rounding_of_a_known_value():
    # bfloat16 keeps 8 significant bits: 1 + 2⁻⁹ rounds to 1.0, 3.0 is exact.
    ref = torch.tensor([1.0 + 2**-9, 3.0])
    low = ref.bfloat16()
    assert low.float().tolist() == [1.0, 3.0]
    e = layer_error(ref, low)
    assert e.max_abs == 2**-9
    assert e.mean_abs == 2**-10
    assert e.mean_rel == pytest.approx(2**-9 / (4 + 2**-9), rel=1e-12)
    signal = ((1 + 2**-9) ** 2 + 9) / 2
    assert e.sqnr_db == pytest.approx(10 * math.log10(signal / (2**-18 / 2)), rel=1e-12)


def test_identical_outputs_have_infinite_sqnr_written_as_null():
    t = torch.tensor([[0.5, -2.0], [0.0, 8.0]])
    e = layer_error(t, t.clone())
    assert (e.max_abs, e.mean_rel, e.sqnr_db, e.cosine, e.identical) == (0, 0, math.inf, 1, True)
    data = e.to_dict()
    assert data["sqnr_db"] is None and data["identical"] is True
    assert LayerError.from_dict(data) == e


def test_all_zero_reference():
    e = layer_error(torch.zeros(3), torch.tensor([0.0, 1.0, 0.0]))
    assert (e.sqnr_db, e.mean_rel, e.cosine, e.max_abs) == (-math.inf, math.inf, 0.0, 1.0)
    data = e.to_dict()
    assert (data["sqnr_db"], data["mean_rel"]) == (None, None)
    assert LayerError.from_dict(data) == e
    both_zero = layer_error(torch.zeros(2), torch.zeros(2))
    assert (both_zero.cosine, both_zero.identical) == (1.0, True)


def test_float16_overflow_is_counted_and_json_safe():
    ref = torch.tensor([1e5, 2.0])
    e = layer_error(ref, ref.half())  # 1e5 > 65504: inf in float16
    assert e.nonfinite == 1
    assert e.max_abs == math.inf
    data = e.to_dict()
    assert data["max_abs"] is None and data["nonfinite"] == 1
    again = LayerError.from_dict(data)
    assert again.max_abs == math.inf and again.nonfinite == 1


def test_chunked_sums_equal_one_float64_sum(monkeypatch):
    monkeypatch.setattr(numerics, "_CHUNK", 3)
    g = torch.Generator().manual_seed(1)
    ref = torch.randn(5, 7, generator=g)
    low = ref.bfloat16()
    e = layer_error(ref, low)
    r, lo = ref.double(), low.double()
    noise = ((r - lo) ** 2).sum()
    assert e.sqnr_db == pytest.approx(float(10 * torch.log10((r * r).sum() / noise)), rel=1e-12)
    assert e.cosine == pytest.approx(float((r * lo).sum() / (r.norm() * lo.norm())), rel=1e-12)


def test_shapes_must_match():
    with pytest.raises(ValueError, match="shapes differ"):
        layer_error(torch.zeros(2, 3), torch.zeros(3, 2))

"""Crossover interpolation on synthetic speedup series (log scale on x)."""

import math

import pytest

from autocast_explorer.core.sweeps.crossover import (
    Crossing,
    crossovers,
    find_crossings,
    format_value,
)


def test_never_crossing_gives_an_empty_list():
    assert crossovers([1, 8, 64, 512], [0.2, 0.3, 0.5, 0.9]) == []
    assert crossovers([1, 8, 64, 512], [1.2, 1.5, 2.0, 3.0]) == []
    assert crossovers([], []) == []
    assert crossovers([64], [0.5]) == []


def test_one_crossing_is_interpolated_in_log_x():
    # 0.5 at 64, 1.5 at 256: halfway in speedup is halfway in log(x), i.e. sqrt(64·256) = 128.
    assert crossovers([16, 64, 256, 1024], [0.4, 0.5, 1.5, 2.0]) == [pytest.approx(128.0)]
    # A quarter of the way: 0.75 → 1.0 of 0.75 → 1.75 between 10 and 1000 → 10·100^0.25.
    (x,) = crossovers([10, 1000], [0.75, 1.75])
    assert x == pytest.approx(10 * 100**0.25)
    assert find_crossings([10, 1000], [0.75, 1.75]) == [Crossing(x, "up")]


def test_several_crossings_in_order_with_directions():
    found = find_crossings([1, 2, 4, 8, 16], [0.5, 2.0, 0.5, 0.5, 2.0])
    assert [c.direction for c in found] == ["up", "down", "up"]
    # 0.5 → 2.0: crossing a third of the way in log2 between 1 and 2 → 2^(1/3).
    assert found[0].value == pytest.approx(2 ** (1 / 3))
    assert found[1].value == pytest.approx(2 ** (1 + 2 / 3))
    assert found[2].value == pytest.approx(2 ** (3 + 1 / 3))
    assert crossovers([1, 2, 4, 8, 16], [0.5, 2.0, 0.5, 0.5, 2.0]) == [c.value for c in found]


def test_a_downward_crossing():
    (c,) = find_crossings([100, 10_000], [1.5, 0.5])
    assert c.direction == "down" and not c.rising
    assert c.value == pytest.approx(1000.0)  # halfway in speedup, halfway in log(x)
    # 2 → 0.5: 1.0 lies at t = (2 − 1) / (2 − 0.5) = 2/3 of the way in log(x).
    (c,) = find_crossings([100, 10_000], [2.0, 0.5])
    assert math.isclose(c.value, 100 * 100 ** (2 / 3))


def test_exact_hits_on_one():
    # Passing through an exact 1.0 reports that x, once.
    assert crossovers([8, 64, 512], [0.5, 1.0, 2.0]) == [64.0]
    # A run of exact 1.0 values between a loss and a win: reported at the first of them.
    assert crossovers([8, 64, 128, 512], [0.5, 1.0, 1.0, 2.0]) == [64.0]
    # Touching 1.0 and turning back is not a crossing.
    assert crossovers([8, 64, 512], [0.5, 1.0, 0.6]) == []
    # Starting or ending exactly on 1.0 is not a crossing either.
    assert crossovers([8, 64, 512], [1.0, 1.3, 2.0]) == []
    assert crossovers([8, 64, 512], [0.5, 0.8, 1.0]) == []
    assert crossovers([8, 64], [1.0, 1.0]) == []
    # An exact hit at a neighbour's sign change is not counted twice.
    assert crossovers([1, 2, 4], [2.0, 1.0, 0.5]) == [2.0]


def test_unsorted_input_and_nan_points():
    assert crossovers([256, 16, 64], [1.5, 0.4, 0.5]) == [pytest.approx(128.0)]
    # An unmeasured point is skipped: the crossing is interpolated across it.
    assert crossovers([64, 128, 256], [0.5, float("nan"), 1.5]) == [pytest.approx(128.0)]


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="2 values but 1 speedups"):
        crossovers([1, 2], [0.5])
    with pytest.raises(ValueError, match="positive"):
        crossovers([0, 2], [0.5, 2.0])


def test_format_value():
    assert format_value(127.6) == "128"
    assert format_value(4.37) == "4.4"
    assert format_value(1024.0) == "1024"

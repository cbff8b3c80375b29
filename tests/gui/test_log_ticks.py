"""Tick labels on the log axes read as plain numbers at the right positions."""

import math

import pytest

from autocast_explorer.gui.charts.log_ticks import decade_ticks, number, value_ticks


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.05, "0.05"),
        (0.2, "0.2"),
        (3, "3"),
        (64, "64"),
        (2048, "2048"),
        (10_000, "10k"),
        (1_000_000, "1M"),
        (2.5, "2.5"),
    ],
)
def test_number(value, text):
    assert number(value) == text


def test_decade_ticks_cover_the_range_in_1_2_5_steps():
    ticks = decade_ticks(0.017, 0.24)
    assert [label for _pos, label in ticks] == ["0.02", "0.05", "0.1", "0.2"]
    assert [pos for pos, _label in ticks] == pytest.approx(
        [math.log10(v) for v in (0.02, 0.05, 0.1, 0.2)]
    )
    wide = decade_ticks(0.01, 1e5, max_ticks=8)
    assert 2 <= len(wide) <= 8
    assert decade_ticks(0.055, 0.069) == [
        (math.log10(0.055), "0.055"),
        (math.log10(0.069), "0.069"),
    ]
    assert decade_ticks(0, 1) == []


def test_value_ticks_label_the_swept_values():
    assert [label for _p, label in value_ticks([1, 8, 64, 512])] == ["1", "8", "64", "512"]
    many = value_ticks(range(1, 41), max_ticks=12)
    labels = [label for _p, label in many]
    assert labels == ["4", "8", "12", "16", "20", "24", "28", "32", "36", "40"]
    assert [label for _p, label in value_ticks(2**k for k in range(12))][-1] == "2048"
    assert value_ticks([]) == []

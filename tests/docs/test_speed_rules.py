"""docs/measurement.md's table of the speed call's rules is the code's: each row judged."""

from pathlib import Path

from autocast_explorer.core.experiment.speed_rules import END, START, rule_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "measurement.md"


def test_the_speed_rule_table_matches_the_code():
    text = DOC.read_text(encoding="utf-8")
    assert START in text and END in text
    block = text[text.index(START) : text.index(END) + len(END)]
    expected = rule_table()  # raises if a row's example is not called as the row says
    assert block == expected, (
        "run `python -m autocast_explorer.core.experiment.speed_rules` and paste the block"
    )


def test_a_row_the_code_does_not_follow_fails():
    import dataclasses

    import pytest

    from autocast_explorer.core.experiment.speed_rules import RULES

    wrong = dataclasses.replace(RULES[-1], call="faster")  # straddling 1.05 is not faster
    with pytest.raises(AssertionError, match="judged unclear, the table says faster"):
        wrong.judged()

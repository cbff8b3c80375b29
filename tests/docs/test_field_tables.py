"""docs/testing.md's field tables match the dataclasses (every field, type and empty value)."""

from pathlib import Path

from tests.docs.field_tables import END, START, tables

DOC = Path(__file__).resolve().parents[2] / "docs" / "testing.md"


def test_the_field_tables_match_the_code():
    text = DOC.read_text(encoding="utf-8")
    assert START in text and END in text
    block = text[text.index(START) : text.index(END) + len(END)]
    assert block == tables(), "run `python -m tests.docs.field_tables` and paste the block"

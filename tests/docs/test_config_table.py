"""docs/file-formats.md's config field table matches the fields' definitions (config.py)."""

from pathlib import Path

from tests.docs.config_table import END, START, table

DOC = Path(__file__).resolve().parents[2] / "docs" / "file-formats.md"


def test_the_config_table_matches_the_code():
    text = DOC.read_text(encoding="utf-8")
    assert START in text and END in text
    block = text[text.index(START) : text.index(END) + len(END)]
    assert block == table(), "run `python -m tests.docs.config_table` and paste the block"

"""python_snippets finds the blocks of one section, at their real line numbers."""

from __future__ import annotations

import pytest

from tests.docs.snippets import python_snippets

PAGE = """# Title

```python
first = 1
```

## Testing

```python
def test_a():
    pass
```

```text
not python
```

### Sub-section still inside

```python
second = 2
```

## Next section

```python
third = 3
```
"""


def test_every_block_with_its_first_code_line(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    found = python_snippets(page)
    assert [(s.line, s.code) for s in found] == [
        (4, "first = 1\n"),
        (10, "def test_a():\n    pass\n"),
        (21, "second = 2\n"),
        (27, "third = 3\n"),
    ]
    assert PAGE.splitlines()[found[1].line - 1] == "def test_a():"


def test_only_the_named_section_and_its_sub_sections(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    assert [s.code for s in python_snippets(page, "Testing")] == [
        "def test_a():\n    pass\n",
        "second = 2\n",
    ]


def test_tracebacks_point_at_the_markdown_line(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n\n```python\nx = 1\nraise ValueError(x)\n```\n", encoding="utf-8")
    (snippet,) = python_snippets(page)
    with pytest.raises(ValueError) as raised:
        exec(snippet.compiled(), {})
    assert raised.traceback[-1].lineno + 1 == 5
    assert str(raised.traceback[-1].path) == str(page)


def test_an_unclosed_block_is_an_error(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```python\nx = 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"page\.md:1: a code block is never closed"):
        python_snippets(page)

"""The testers' documentation runs as written: README's pytest-qt example and every python
block of docs/testing.md are extracted at collection time and collected as tests of this
module (with their fixtures), so a renamed method or a changed field breaks them here.

Rules for the docs: every ```python block defines at least one `test_…` function, using only
pytest-qt's and the kit's fixtures; test names are unique across the pages. Show non-test code
in ```text blocks. Tracebacks point at the Markdown file and line.
"""

from __future__ import annotations

from pathlib import Path

from tests.docs.snippets import Snippet, python_snippets

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
REFERENCE = ROOT / "docs" / "testing.md"
README_SECTION = "Testing with pytest-qt"


def documented_snippets() -> list[Snippet]:
    return python_snippets(README, README_SECTION) + python_snippets(REFERENCE)


def _collect(snippets: list[Snippet]) -> dict[str, list[str]]:
    """Run each block's definitions into this module; returns the test names per block."""
    names: dict[str, list[str]] = {}
    origin: dict[str, str] = {}
    for snippet in snippets:
        namespace: dict[str, object] = {"__name__": __name__}
        exec(snippet.compiled(), namespace)
        tests = [n for n, obj in namespace.items() if n.startswith("test_") and callable(obj)]
        for name in tests:
            if name in origin:
                raise ValueError(f"{snippet.where}: {name} is already defined at {origin[name]}")
            origin[name] = snippet.where
            globals()[name] = namespace[name]
        names[snippet.where] = tests
    return names


TESTS_BY_SNIPPET = _collect(documented_snippets())


def test_every_python_block_of_the_docs_is_a_test():
    assert TESTS_BY_SNIPPET, "no python blocks found"
    empty = [where for where, tests in TESTS_BY_SNIPPET.items() if not tests]
    assert empty == [], f"python blocks that define no test_ function: {empty}"


def test_the_readme_keeps_its_two_examples():
    """The plain pytest-qt one (no kit needed) and the same test with the kit."""
    readme = [s.where for s in python_snippets(README, README_SECTION)]
    assert [TESTS_BY_SNIPPET[where] for where in readme] == [
        ["test_autocast_runs_linear_layers_in_bfloat16"],
        ["test_linear_layers_run_in_bfloat16_with_the_kit"],
    ]

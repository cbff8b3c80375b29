"""The example under "Testing with pytest-qt" in README.md runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_example_passes(qtbot):
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Testing with pytest-qt") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace: dict[str, object] = {}
    exec(compile(code, str(README), "exec"), namespace)
    tests = [name for name in namespace if name.startswith("test_")]
    assert tests == ["test_autocast_runs_linear_layers_in_bfloat16"]
    namespace[tests[0]](qtbot)

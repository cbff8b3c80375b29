"""The import contract, checked by walking every module's imports with ast (no import needed).

core never imports Qt, pyqtgraph, the GUI or the CLI; a feature never imports another feature
or the shell's main window; charts import no feature; and module-level imports among
autocast_explorer modules form no cycle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "autocast_explorer"
QT = ("PySide6", "shiboken6", "pyqtgraph")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, *, module_level_only: bool = False) -> set[str]:
    """Every module `path` imports (absolute names); module level only if asked."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    nodes = tree.body if module_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if module_level_only and isinstance(node, ast.If):
            continue  # `if TYPE_CHECKING:` blocks are not executed at import time
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def feature_of(name: str) -> str | None:
    prefix = "autocast_explorer.gui.features."
    return name[len(prefix) :].split(".")[0] if name.startswith(prefix) else None


@pytest.mark.parametrize("name", [m for m in MODULES if m.startswith("autocast_explorer.core")])
def test_core_imports_no_qt_gui_or_cli(name):
    bad = {
        i
        for i in imports(MODULES[name])
        if i.split(".")[0] in QT or i.startswith(("autocast_explorer.gui", "autocast_explorer.cli"))
    }
    assert bad == set(), f"{name} imports {sorted(bad)}"


@pytest.mark.parametrize("name", [m for m in MODULES if feature_of(m)])
def test_features_import_neither_each_other_nor_the_main_window(name):
    own = feature_of(name)
    found = imports(MODULES[name])
    others = {i for i in found if feature_of(i) not in (None, own)}
    window = {i for i in found if i.startswith("autocast_explorer.gui.shell.main_window")}
    assert others == set(), f"{name} imports other features: {sorted(others)}"
    assert window == set(), f"{name} imports the main window"


@pytest.mark.parametrize(
    "name", [m for m in MODULES if m.startswith("autocast_explorer.gui.charts")]
)
def test_charts_import_no_feature(name):
    found = {i for i in imports(MODULES[name]) if feature_of(i) or i.endswith(".features")}
    assert found == set(), f"{name} imports {sorted(found)}"


def test_no_import_cycles_among_module_level_imports():
    graph = {
        name: {i for i in imports(path, module_level_only=True) if i in MODULES and i != name}
        for name, path in MODULES.items()
    }
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    # A package importing its own submodule (`__init__` re-exporting install) is not a cycle
    # unless the submodule imports the package back, which the graph would show as one.
    assert cycles == [], "import cycles:\n" + "\n".join(" → ".join(c) for c in cycles)


def test_the_contract_sees_a_violation():
    """The walker finds what it is meant to forbid (guards against a check that sees nothing)."""
    lessons = MODULES["autocast_explorer.gui.features.lessons.panel"]
    assert "autocast_explorer.gui.shell.context" in imports(lessons)
    window = MODULES["autocast_explorer.gui.shell.main_window"]
    assert {f for f in map(feature_of, imports(window)) if f} >= {"sweeps", "lessons"}


def test_no_name_or_comment_refers_to_an_issue_number():
    """Names and docstrings name concepts, not the ticket that delivered them."""
    import re

    pattern = re.compile(r"issue ?[0-9]", re.IGNORECASE)
    files = [ROOT / "Makefile"]
    for folder in ("autocast_explorer", "tests", "tools", "bench"):
        files += sorted((ROOT / folder).rglob("*.py"))
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in files
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []

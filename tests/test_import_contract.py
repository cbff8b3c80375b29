"""The import contracts of pyproject.toml ([tool.importlinter]), checked on the real import graph
and shown to break on a planted violation (a contract that cannot fail checks nothing).

import-linter states the rules (core has no Qt; cli/testing > gui > core; core's and gui's
layers; independent features; no circles at any level); `make test` runs `lint-imports` too.
What it cannot say stays here: no code names the ticket that delivered it.
"""

from __future__ import annotations

import copy
import re
import tomllib
from pathlib import Path

import grimp
import pytest
from importlinter.configuration import configure
from importlinter.contracts.acyclic_siblings import AcyclicSiblingsContract
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.independence import IndependenceContract
from importlinter.contracts.layers import LayersContract

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
    "importlinter"
]
KINDS = {
    "forbidden": ForbiddenContract,
    "layers": LayersContract,
    "independence": IndependenceContract,
    "acyclic_siblings": AcyclicSiblingsContract,
}
P = "autocast_explorer."

#: One planted import per contract that the contract must refuse.
VIOLATIONS = {
    "forbidden": (P + "core.documents.reader", "PySide6"),
    "front ends": (P + "core.experiment.config", P + "gui.shell.style"),
    "core in one order": (P + "core.documents.reader", P + "core.experiment.config"),
    "gui in one order": (P + "gui.shell.style", P + "gui.features.lessons.panel"),
    "independent": (P + "gui.features.lessons.panel", P + "gui.features.sweeps.tab"),
    "circles": (P + "core.runtime.errors", P + "core.runtime.threads"),
}


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    """Every import, at module level, in functions and under TYPE_CHECKING, as lint-imports."""
    configure()  # import-linter's own settings (its timer), as the lint-imports command sets them
    return grimp.build_graph(
        *CONFIG["root_packages"],
        include_external_packages=CONFIG.get("include_external_packages", False),
        exclude_type_checking_imports=False,
        cache_dir=None,
    )


def contract(options: dict) -> object:
    options = dict(options)
    name = options.pop("name")
    kind = options.pop("type")
    return KINDS[kind](name=name, session_options=CONFIG, contract_options=options)


def contract_named(words: str) -> dict:
    (found,) = [c for c in CONFIG["contracts"] if words in c["name"] or c["type"] == words]
    return found


def test_every_rule_is_declared():
    names = " / ".join(c["name"] for c in CONFIG["contracts"])
    for words in ("no Qt", "front ends", "core in one order", "gui in one order", "independent"):
        assert words in names
    kinds = [c["type"] for c in CONFIG["contracts"]]
    assert sorted(set(kinds)) == sorted(KINDS)


@pytest.mark.parametrize("options", CONFIG["contracts"], ids=lambda c: c["name"][:40])
def test_contract_is_kept(options, graph):
    check = contract(options).check(graph, verbose=False)
    assert check.kept, f"{options['name']}: {check.metadata}"


@pytest.mark.parametrize("words", sorted(VIOLATIONS))
def test_contract_breaks_on_a_planted_import(words, graph):
    planted = copy.deepcopy(graph)  # the module's graph stays as built
    importer, imported = VIOLATIONS[words]
    assert importer in planted.modules
    planted.add_import(importer=importer, imported=imported)
    options = contract_named("forbidden" if words == "forbidden" else words)
    if words == "circles":
        options = contract_named("acyclic_siblings")
    assert not contract(options).check(planted, verbose=False).kept


def test_no_name_or_comment_refers_to_an_issue_number():
    """Names and docstrings name concepts, not the ticket that delivered them."""
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

"""The tester's contract cannot change by accident.

The live window's objectNames, signals (with argument types), public methods and attributes —
of the window and of each surface in live_contract.SURFACES — must equal snapshot.json, and
every name in the snapshot must be documented in docs/testing.md.

To change the contract on purpose (add, rename or remove a name), update both in one commit:
    UPDATE_CONTRACT_SNAPSHOT=1 python -m pytest tests/contract
rewrites snapshot.json from the live window (the test then fails once more to make the rewrite
visible); document the change in docs/testing.md; the diff of snapshot.json is the change log.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from pathlib import Path

from tests.contract.live_contract import live_contract

HERE = Path(__file__).resolve().parent
SNAPSHOT = HERE / "snapshot.json"
REFERENCE = HERE.parents[1] / "docs" / "testing.md"
UPDATE_ENV = "UPDATE_CONTRACT_SNAPSHOT"


def as_text(contract: dict) -> str:
    return json.dumps(contract, indent=2, ensure_ascii=False) + "\n"


def documented_names(text: str) -> set[str]:
    """Every identifier inside a `code span` (which may wrap lines) or a fenced block."""
    spans = re.findall(r"```.*?```|`[^`]+`", text, flags=re.S)
    return {word for span in spans for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", span)}


def test_code_spans_are_read_across_line_breaks():
    text = "Methods: `add_files(paths) ->\nlist[str]`, ```python\nx = 1\n``` and `y`."
    assert documented_names(text) == {"add_files", "paths", "list", "str", "python", "x", "y"}


def contract_names(contract: dict) -> set[str]:
    names = set(contract["objectNames"])
    parts = [contract["window"], *(s for s in contract["surfaces"].values() if s)]
    for part in parts:
        names |= set(part["signals"]) | set(part["methods"]) | set(part.get("attributes", ()))
        names.add(part["class"])
    names |= {name for name, part in contract["surfaces"].items() if part}
    return names


def test_the_live_contract_matches_the_snapshot(explorer):
    live = as_text(live_contract(explorer))
    if os.environ.get(UPDATE_ENV) == "1":
        SNAPSHOT.write_text(live, encoding="utf-8")
    stored = SNAPSHOT.read_text(encoding="utf-8") if SNAPSHOT.exists() else ""
    diff = "".join(
        difflib.unified_diff(
            stored.splitlines(keepends=True),
            live.splitlines(keepends=True),
            "snapshot.json (documented)",
            "the live window",
        )
    )
    assert not diff, (
        "The tester's contract changed. If on purpose, rerun with "
        f"{UPDATE_ENV}=1 and document it in docs/testing.md:\n{diff}"
    )


def test_every_surface_in_the_snapshot_exists():
    snapshot = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    missing = [name for name, part in snapshot["surfaces"].items() if part is None]
    assert missing == []


def test_every_name_in_the_snapshot_is_documented():
    snapshot = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    undocumented = sorted(contract_names(snapshot) - documented_names(REFERENCE.read_text("utf-8")))
    assert undocumented == [], f"not in docs/testing.md: {', '.join(undocumented)}"


#: Names documented on two surfaces before names had to be unique; a tester finds each within
#: its tab (`window.hardware.findChild(QPushButton, "probeButton")`). Renaming one would break
#: tests written against the documented contract, so they stay, and no new one may join them.
SHARED_BY_CONTRACT = {"probeButton": "QPushButton ×2"}


def test_no_two_findable_objects_share_an_objectname(explorer):
    """findChild returns the first match: a repeated name would hide the second object."""
    repeated = {n: c for n, c in live_contract(explorer)["objectNames"].items() if "×" in c}
    assert repeated == SHARED_BY_CONTRACT

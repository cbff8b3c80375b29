"""Every JSON document the program writes during the tests is checked against its published
schema: the four document classes' `to_json` (which every writer — CLI, window, report, preset
save — goes through) are wrapped for the whole session, so a writer and its schema cannot drift
apart unnoticed. A violation fails the test that wrote the document.

The suite also uses the tester's kit the way a tester's project does. Installed, the package
registers `autocast_explorer.testing` through its `pytest11` entry point; a source checkout that
was never installed has none, so it is named here too. Both register it under the same name, so
it is loaded once either way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import wraps
from typing import Any

import pytest

from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.learning.presets import Preset
from autocast_explorer.core.numerics.oppolicy import ProbeResult
from autocast_explorer.core.sweeps.result import SweepResult
from tests.schema_check import VALIDATED, check_document

pytest_plugins = ["autocast_explorer.testing", "pytester"]

WRITERS = (ExperimentResult, SweepResult, ProbeResult, Preset)


def _validating(to_json: Callable[..., str]) -> Callable[..., str]:
    @wraps(to_json)
    def to_json_checked(self: Any, *args: Any, **kwargs: Any) -> str:
        text = to_json(self, *args, **kwargs)
        check_document(text)
        return text

    return to_json_checked


@pytest.fixture(autouse=True, scope="session")
def documents_match_their_schemas() -> Iterator[None]:
    originals = {cls: cls.to_json for cls in WRITERS}
    for cls, to_json in originals.items():
        cls.to_json = _validating(to_json)  # type: ignore[method-assign]
    yield
    for cls, to_json in originals.items():
        cls.to_json = to_json  # type: ignore[method-assign]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if VALIDATED:
        counts = ", ".join(f"{tag.split('/')[1]} {n}" for tag, n in sorted(VALIDATED.items()))
        terminalreporter.write_line(f"documents validated against their schemas: {counts}")

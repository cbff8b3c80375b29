"""Shared by the fuzz tests: one real result document to corrupt, and a folder snapshot that
proves a refused input touched no file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from autocast_explorer.cli import main


@pytest.fixture(scope="session")
def good_result(tmp_path_factory) -> dict:
    """A real result document (a tiny run), parsed."""
    path = tmp_path_factory.mktemp("fuzz-source") / "good.json"
    code = main(
        ["run", "--widths", "8,6,4", "--batch", "4", "--min-time", "0.01", "--json", str(path)]
    )
    assert code == 0
    return json.loads(path.read_text())


def snapshot(folder: Path) -> dict[str, tuple[int, int, int]]:
    """Every path under `folder` with its size, mtime and mode: equal snapshots mean untouched."""
    found = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root) / name
            info = path.lstat()
            found[str(path.relative_to(folder))] = (info.st_size, info.st_mtime_ns, info.st_mode)
    return found

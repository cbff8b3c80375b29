"""Writing the user's model files the fuzz cases run: a factory in a .py file, with code placed
at its import, in its factory or in its forward."""

from __future__ import annotations

import textwrap
from pathlib import Path

#: Flags that keep a user model's run short (a tiny model, a short timing, one thread).
QUICK = ["--min-time", "0.01", "--threads", "1", "--batch", "2"]
#: The same for a sweep (its --values set the batch).
QUICK_SWEEP = ["--min-time", "0.01", "--threads", "1", "--no-onednn"]

_TEMPLATE = """\
# {tag}
import os, sys, torch
{at_import}

class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
{in_forward}
        return self.fc(x)

def build():
{in_factory}
    return Model(), torch.randn(2, 8)
"""

#: Where a snippet of the user's code runs.
PLACES = ("import", "factory", "forward")


def model_file(folder: Path, code: str = "", place: str = "forward", name: str = "m.py") -> str:
    """`folder/name` holding a factory `build` (Linear 8→4, input 2×8) with `code` run at
    `place`; its spec. The folder's name is written in, so each file is a new module (the
    explorer imports a file once per content)."""
    snippets = {p: code if p == place else "" for p in PLACES}
    path = folder / name
    path.write_text(
        _TEMPLATE.format(
            tag=folder,
            at_import=snippets["import"],
            in_forward=textwrap.indent(snippets["forward"] or "pass", " " * 8),
            in_factory=textwrap.indent(snippets["factory"] or "pass", " " * 4),
        )
    )
    return f"{path}:build"

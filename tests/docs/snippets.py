"""Find the ```python blocks of a Markdown page, with the line each starts on."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FENCE = re.compile(r"^```(\w*)\s*$")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")


@dataclass(frozen=True)
class Snippet:
    """One fenced python block: where it is and its code."""

    path: Path
    #: 1-based line of the block's first line of code.
    line: int
    code: str

    @property
    def where(self) -> str:
        return f"{self.path.name}:{self.line}"

    def compiled(self):
        """Compiled so tracebacks point at the Markdown file and its real line numbers."""
        return compile("\n" * (self.line - 1) + self.code, str(self.path), "exec")


def python_snippets(path: Path, section: str | None = None) -> list[Snippet]:
    """Every ```python block of `path`, or only those under the heading titled `section`
    (up to the next heading of the same or a higher level)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    snippets: list[Snippet] = []
    inside_section = section is None
    section_level = 0
    block: list[str] | None = None
    language = ""
    start = 0
    for number, line in enumerate(lines, 1):
        if block is not None:
            if line.strip() == "```":
                if language == "python" and inside_section:
                    snippets.append(Snippet(path, start, "\n".join(block) + "\n"))
                block = None
            else:
                block.append(line)
            continue
        fence = FENCE.match(line)
        if fence:
            block, language, start = [], fence.group(1), number + 1
            continue
        heading = HEADING.match(line)
        if heading and section is not None:
            level = len(heading.group(1))
            if heading.group(2) == section:
                inside_section, section_level = True, level
            elif inside_section and level <= section_level:
                inside_section = False
    if block is not None:
        raise ValueError(f"{path.name}:{start - 1}: a code block is never closed")
    return snippets

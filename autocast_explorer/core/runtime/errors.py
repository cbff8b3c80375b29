"""ConfigError: one bad input value, named by its field (shown inline under that field); and
error_text: any exception torch raised as one readable line."""

from __future__ import annotations


class ConfigError(ValueError):
    """A config value broke a rule; `field` names the offending field for inline display."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.rule = message


def error_text(exc: BaseException) -> str:
    """An exception as one readable message: type and first lines, without a C++ backtrace."""
    text = str(exc).strip().split("\nException raised from")[0].strip()
    lines = [line for line in text.splitlines() if line.strip()][:4]
    return f"{type(exc).__name__}: {' '.join(lines)}"[:600]

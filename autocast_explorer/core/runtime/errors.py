"""ConfigError: one bad input value, named by its field (shown inline under that field)."""

from __future__ import annotations


class ConfigError(ValueError):
    """A config value broke a rule; `field` names the offending field for inline display."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.rule = message

"""DataError: a data or checkpoint file that breaks a rule, in one line naming the array and
the rule (a ConfigError of field `data` or `checkpoint`, so the command line exits 2 with it and
the window shows it under the data selector)."""

from __future__ import annotations

from autocast_explorer.core.runtime.errors import ConfigError


class DataError(ConfigError):
    """A data or checkpoint file that breaks a rule; one line naming the array and the rule."""

    def __init__(self, message: str, field_name: str = "data") -> None:
        super().__init__(field_name, message)

"""ExperimentState: the window's experiment config in one place, observable.

It holds one ExperimentConfig, always a valid one (core validates every config it builds), and
says which fields changed whenever it is replaced. The controls edit it, every feature sets it
through the context (a preset, a lesson step, the saved settings), and a Run runs what it holds,
so a field no input shows survives the next Run.

One signal carries the changed names, rather than one signal per field (napari's EventedModel
has both): a preset replaces a dozen fields at once, and the listeners (validation, the stale
mark, the controls) want to react once to the new config, not once per field.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from PySide6.QtCore import QObject, Signal

from autocast_explorer.core.experiment.config import ExperimentConfig

#: Every config field, in declaration order.
FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(ExperimentConfig))


def changed_fields(old: ExperimentConfig, new: ExperimentConfig) -> frozenset[str]:
    """The names of the fields whose values differ between `old` and `new`."""
    return frozenset(name for name in FIELDS if getattr(old, name) != getattr(new, name))


class ExperimentState(QObject):
    """The current ExperimentConfig; `changed(frozenset[str])` names the fields that changed."""

    #: The config was replaced: the frozenset of the names of the fields whose values changed.
    changed = Signal(object)

    def __init__(self, config: ExperimentConfig | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.setObjectName("experimentState")
        self._config = config if config is not None else ExperimentConfig()

    @property
    def config(self) -> ExperimentConfig:
        """The config a Run measures (valid by construction)."""
        return self._config

    def set(self, config: ExperimentConfig) -> frozenset[str]:
        """Hold `config`; emit `changed` with the changed names (none: no signal)."""
        if not isinstance(config, ExperimentConfig):
            raise TypeError(f"an ExperimentConfig is needed, not {type(config).__name__}")
        names = changed_fields(self._config, config)
        self._config = config
        if names:
            self.changed.emit(names)
        return names

    def update(self, **changes: Any) -> frozenset[str]:
        """Change some fields; ConfigError (naming the field) leaves the state as it was."""
        return self.set(self._config.replace(**changes))

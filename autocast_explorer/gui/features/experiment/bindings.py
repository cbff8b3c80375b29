"""The controls bound both ways to the ExperimentState, which holds the config a Run measures.

An edit sets the fields of the inputs edited, and nothing else: a field set from elsewhere (a
preset, a lesson, a feature's `ctx.set_config`) survives an edit of another input, and so does
one that no input shows. Only a valid config reaches the state: an edit core refuses (text that
does not parse, a value against a rule) is held here as pending, with its ConfigError, until
further edits make it valid; the state keeps the last valid config meanwhile. A change of the
state from outside rewrites the inputs of the fields it changed and drops what was pending.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.gui.shell.experiment_state import ExperimentState


@dataclass(frozen=True)
class Binding:
    """Some inputs and the config fields they stand for, both ways."""

    name: str
    #: Every field `read` may return and `write` shows.
    fields: frozenset[str]
    #: The fields the inputs describe now (ConfigError: text that does not parse).
    read: Callable[[], dict[str, Any]]
    #: Show the config's fields in the inputs (their signals are blocked meanwhile).
    write: Callable[[ExperimentConfig], None]
    widgets: tuple[QObject, ...] = ()


class ConfigBindings(QObject):
    """The panel's bindings, the edits core refused so far, and the state they feed."""

    #: The state or the pending edits changed (the config may now be valid, invalid or new).
    changed = Signal()

    def __init__(
        self, state: ExperimentState, after_write: Callable[[], None], parent: QObject
    ) -> None:
        super().__init__(parent)
        self.state = state
        self._after_write = after_write
        self._bindings: dict[str, Binding] = {}
        self._by_widget: dict[QObject, str] = {}
        #: Binding name -> what its inputs describe (or why they describe nothing), not yet
        #: in the state because the config with it is invalid.
        self._pending: dict[str, dict[str, Any] | ConfigError] = {}
        self._error: ConfigError | None = None
        #: The config an edit is setting on the state: the inputs show it already.
        self._committing: ExperimentConfig | None = None
        state.changed.connect(self._on_state_changed)

    def add(self, binding: Binding) -> None:
        """Bind; each field belongs to one binding (an edit sets exactly its fields)."""
        taken = {f for b in self._bindings.values() for f in b.fields}
        if binding.name in self._bindings or binding.fields & taken:
            raise ValueError(f"binding {binding.name!r} repeats a name or field")
        self._bindings[binding.name] = binding
        self._by_widget.update(dict.fromkeys(binding.widgets, binding.name))

    def binding_of(self, widget: QObject) -> str | None:
        """The binding whose inputs include `widget`."""
        return self._by_widget.get(widget)

    def unbound_fields(self, all_fields: tuple[str, ...]) -> tuple[str, ...]:
        """The fields of `all_fields` no input shows (the state alone keeps them)."""
        bound = {f for b in self._bindings.values() for f in b.fields}
        return tuple(f for f in all_fields if f not in bound)

    # ---- the config -------------------------------------------------------------------------
    def config(self) -> ExperimentConfig:
        """The state's config; ConfigError while an edit is pending (as Run is off)."""
        if self._error is not None:
            raise self._error
        return self.state.config

    # ---- inputs -> state --------------------------------------------------------------------
    def edited(self, name: str) -> None:
        """The inputs of binding `name` were edited: set its fields if the config stays valid."""
        if name not in self._bindings:
            return  # an input set up before the panel binds it
        try:
            self._pending[name] = self._bindings[name].read()
        except ConfigError as exc:
            self._pending[name] = exc
        self._commit()
        self.changed.emit()

    def _commit(self) -> None:
        changes: dict[str, Any] = {}
        for name in self._bindings:  # panel order: the first unparsable input is named
            read = self._pending.get(name)
            if isinstance(read, ConfigError):
                self._error = read
                return
            changes.update(read or {})
        try:
            config = self.state.config.replace(**changes)
        except ConfigError as exc:
            self._error = exc
            return
        self._error = None
        self._pending.clear()
        self._committing = config
        try:
            self.state.set(config)
        finally:
            self._committing = None

    # ---- state -> inputs --------------------------------------------------------------------
    @Slot(object)
    def _on_state_changed(self, names: frozenset[str]) -> None:
        if self.state.config is self._committing:
            return  # the inputs show it already: no echo (a listener's own change is shown)
        self._write([b for b in self._bindings.values() if b.fields & names])
        self.changed.emit()

    def discard_pending(self) -> None:
        """Show the state again where edits were pending (a config set from outside wins)."""
        if self._pending or self._error is not None:
            self._write([])
            self.changed.emit()

    def show_all(self) -> None:
        """Show the whole state in the inputs."""
        self._write(list(self._bindings.values()))

    def _write(self, bindings: list[Binding]) -> None:
        names = {b.name for b in bindings} | set(self._pending)
        self._pending.clear()
        self._error = None
        for binding in (b for b in self._bindings.values() if b.name in names):
            blocked = [w.blockSignals(True) for w in binding.widgets]
            try:
                binding.write(self.state.config)
            finally:
                for widget, was in zip(binding.widgets, blocked, strict=True):
                    widget.blockSignals(was)
        self._after_write()

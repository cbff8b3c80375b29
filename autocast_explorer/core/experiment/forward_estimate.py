"""The time guard's forecast of a forward (and of a training step), as the result records it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import Field, PrivateAttr

from autocast_explorer.core.documents.field_types import NonNegative, Omittable, Text
from autocast_explorer.core.documents.model import Part, dump
from autocast_explorer.core.experiment.config import TRAINING_STEP_FORWARDS


class ForwardEstimate(Part):
    """The result's `guard`: the time guard's estimate, beside the measurement."""

    # The time guard's forecast of one forward (the slower mode) and what it rests on; the
    # run's forecast and the memory guard's estimate, and the peak the run then reached.
    schema_name: ClassVar[str] = "guard"

    estimated_forward_ms: Annotated[
        NonNegative, Field(description="the time guard's forecast of one forward")
    ]
    basis: Annotated[Text, Field(description="what was calibrated to make it")]
    estimated_step_ms: Annotated[
        Omittable[NonNegative],
        Field(
            description="training runs: the time guard's forecast of one training step (the "
            "slower mode), from the step's traced ops (absent: 3 forwards were assumed)"
        ),
    ] = None
    forecast_s: Annotated[
        Omittable[NonNegative],
        Field(description="the whole run's forecast, made before it started (seconds)"),
    ] = None
    memory_estimate_mb: Annotated[
        Omittable[NonNegative],
        Field(description="the memory guard's estimate of the run's peak (MiB above its start)"),
    ] = None
    memory_peak_mb: Annotated[
        Omittable[NonNegative],
        Field(
            description="measured: the process's peak resident memory during the run, above "
            "its start (MiB; absent where the system does not tell)"
        ),
    ] = None
    #: Calibration stopped once the ops timed so far passed the limit: `seconds` is a floor.
    _at_least: bool = PrivateAttr(default=False)
    #: The mode whose forward raises here (an op's calibration raised in its dtype; "": none).
    _raises_in: str = PrivateAttr(default="")
    #: Each mode's forward ('float32' and the autocast dtype; empty: `seconds` for each).
    _modes: dict[str, float] = PrivateAttr(default_factory=dict)
    #: Training: each mode's step from its traced ops (empty: TRAINING_STEP_FORWARDS forwards).
    _steps: dict[str, float] = PrivateAttr(default_factory=dict)

    @classmethod
    def of_seconds(
        cls,
        seconds: float,
        basis: str,
        at_least: bool = False,
        raises_in: str = "",
        modes: Mapping[str, float] | None = None,
    ) -> ForwardEstimate:
        made = cls(estimated_forward_ms=seconds * 1e3, basis=basis)
        made._at_least = at_least
        made._raises_in = raises_in
        made._modes = dict(modes or {})
        return made

    def with_steps(self, step: ForwardEstimate) -> ForwardEstimate:
        """A copy with each mode's training step, from `step` (the traced steps' estimate:
        a floor when its timing stopped; a mode whose step raises raises in training)."""
        made = self.model_copy()
        made._steps = dict(step._modes)
        made._at_least = self._at_least or step._at_least
        made._raises_in = self._raises_in or step._raises_in
        return made.model_copy(update={"estimated_step_ms": made.step_seconds() * 1e3})

    @property
    def seconds(self) -> float:
        return self.estimated_forward_ms / 1e3

    @property
    def at_least(self) -> bool:
        """Whether `seconds` is a floor: timing stopped once it passed the guard's limit."""
        return self._at_least

    @property
    def raises_in(self) -> str:
        """The mode whose forward raises on this CPU ("": none): `seconds` is the other's."""
        return self._raises_in

    @property
    def modes(self) -> dict[str, float]:
        """Each mode's forward, as estimated (empty: `seconds` for each)."""
        return dict(self._modes)

    @property
    def steps_traced(self) -> bool:
        """Whether the training steps come from their traced ops (else 3 forwards each)."""
        return bool(self._steps)

    def mode_seconds(self, mode: str) -> float:
        """One forward in `mode` ('float32' or the autocast dtype)."""
        return self._modes.get(mode, self.seconds)

    def step_seconds(self, mode: str | None = None) -> float:
        """One training step in `mode` (None: the slower mode that runs): its traced ops' own
        forecast, else TRAINING_STEP_FORWARDS forwards."""
        if mode is None:
            running = [m for m in self._steps if m != self._raises_in]
            if not running:
                return TRAINING_STEP_FORWARDS * self.seconds
            return max(self._steps[m] for m in running)
        return self._steps.get(mode, TRAINING_STEP_FORWARDS * self.mode_seconds(mode))

    def to_dict(self) -> dict[str, Any]:
        return dump(self)

    def __eq__(self, other: object) -> bool:
        """Equal by what a result records: the per-mode working figures are not saved, so
        an estimate read back from a file equals the one written."""
        if not isinstance(other, ForwardEstimate):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.to_dict().items())))

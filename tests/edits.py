"""Changed copies of measured documents, for tests of what is done with a given figure.

Results, sweep points and their parts are pydantic models whose fields are the file's keys (a
result's latency lives in `latency`, with the evidence of its paired timing): `edited` is what
`dataclasses.replace` was, validated like any part the program makes, and `retimed` swaps the
timing a result or a sweep point reports.
"""

from __future__ import annotations

from typing import Any, TypeVar

from autocast_explorer.core.documents.model import Part
from autocast_explorer.core.experiment.certainty import TimingEvidence
from autocast_explorer.core.experiment.result import ExperimentResult, LatencySection
from autocast_explorer.core.experiment.timing import LatencyStats
from autocast_explorer.core.sweeps.points import PointLatency, SweepPoint

P = TypeVar("P", bound=Part)
#: Leave this as it was (None is a value: no autocast side, no evidence).
KEEP: Any = object()


def edited(part: P, **changes: Any) -> P:
    """`part` with `changes` (by attribute name), made again as the program makes it: validated,
    what follows from the fields derived again, other tools' sections kept."""
    derived = set(getattr(part, "derived_keys", ()))
    given = {name: getattr(part, name) for name in part.model_fields_set - derived}
    made = type(part)(**{**given, **changes})
    extras = part.model_extra or {}
    return made.model_copy(update=extras) if extras else made


def retimed(
    measured: ExperimentResult | SweepPoint,
    *,
    plain: LatencyStats = KEEP,
    autocast: LatencyStats | None = KEEP,
    evidence: TimingEvidence | None = KEEP,
) -> Any:
    """A result or sweep point whose latency (either mode) or timing evidence is replaced."""
    plain = measured.plain if plain is KEEP else plain
    autocast = measured.autocast if autocast is KEEP else autocast
    evidence = measured.evidence if evidence is KEEP else evidence
    if isinstance(measured, SweepPoint):
        assert autocast is not None
        return edited(measured, latency=PointLatency.of(plain, autocast, evidence))
    return edited(measured, latency=LatencySection.of(plain, autocast, evidence))

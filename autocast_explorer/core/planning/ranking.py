"""Which rows are worst, torch-free (the window sorts the locator's chart while torch loads).

A row is worse the further its one-in measure (only it lowered) is from meeting the criterion;
on a tie, the more keeping it alone in float32 helps; then in the model's order. A measure that
is null (an output that was not finite, or a forward that raised) is the worst there is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from autocast_explorer.core.planning.criterion import Criterion, parse_criterion
from autocast_explorer.core.planning.document import SensitivityRow


def badness(criterion: Criterion, value: float | None) -> float:
    """How far a value lies in the wrong direction: larger is worse; None and NaN are +inf."""
    if value is None or math.isnan(value):
        return math.inf
    return value if criterion.op == "<=" else -value


def ranked(rows: Sequence[SensitivityRow], criterion: Criterion) -> tuple[SensitivityRow, ...]:
    """The rows worst first (module docstring; a stable sort keeps the model's order)."""
    return tuple(
        sorted(
            rows,
            key=lambda row: (-badness(criterion, row.one_in), badness(criterion, row.leave_out)),
        )
    )


def first_divergent(rows: Sequence[SensitivityRow], criterion: Criterion | str) -> str | None:
    """The first row, in the model's order, whose one-in value alone fails the criterion: where
    the error jumps. None when every row lowered alone meets it."""
    if isinstance(criterion, str):
        criterion = parse_criterion(criterion)
    for row in rows:
        if not criterion.met(math.nan if row.one_in is None else row.one_in):
            return row.name
    return None

"""What a plan must keep: one condition on the lowered model's answers, e.g. `agree>=99.5%`.

Three measures, each documented in docs/deciding.md:
- `accuracy-drop<=P`: held-out accuracy may fall by at most P points (needs real data); met
  only when the whole 95% interval of the drop says so;
- `agree>=P%`: the rows whose argmax matches float32's, in percent;
- `sqnr>=D`: the output's signal-to-quantisation-noise ratio in dB.
Torch-free: the window checks what is typed while torch loads.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

#: measure -> (the comparison it takes, what its threshold is, whether it needs real data)
MEASURES: dict[str, tuple[str, str, bool]] = {
    "accuracy-drop": ("<=", "points of held-out accuracy", True),
    "agree": (">=", "percent of rows whose argmax matches float32's", False),
    "sqnr": (">=", "dB of output signal-to-quantisation-noise ratio", False),
}
DEFAULT_CRITERION = "agree>=99.5%"
_FORM = re.compile(r"^\s*([a-z-]+)\s*(<=|>=)\s*([0-9]*\.?[0-9]+)\s*(%?)\s*$")


class CriterionError(ValueError):
    """A criterion that cannot be read; the message says which forms are."""


@dataclass(frozen=True)
class Criterion:
    """One condition: `measure op threshold` (`agree >= 99.5`)."""

    measure: str
    threshold: float

    @property
    def op(self) -> str:
        return MEASURES[self.measure][0]

    @property
    def needs_data(self) -> bool:
        return MEASURES[self.measure][2]

    def __str__(self) -> str:
        percent = "%" if self.measure == "agree" else ""
        return f"{self.measure}{self.op}{self.threshold:g}{percent}"

    def met(self, value: float, low: float | None = None, high: float | None = None) -> bool:
        """Whether a measured value meets it. With an interval (the accuracy drop's), the whole
        interval must: a drop ≤ P only when its high edge is; NaN never meets anything."""
        bound = high if self.op == "<=" else low
        checked = value if bound is None else bound
        if math.isnan(checked):
            return False
        return checked <= self.threshold if self.op == "<=" else checked >= self.threshold


def parse_criterion(text: str) -> Criterion:
    """`agree>=99.5%`, `sqnr>=40`, `accuracy-drop<=0.5` → Criterion; CriterionError otherwise."""
    forms = ", ".join(f"{name}{op}N" for name, (op, _, _) in MEASURES.items())
    match = _FORM.match(text.lower())
    if match is None:
        raise CriterionError(f"criterion {text!r}: expected one of {forms}")
    measure, op, number, percent = match.groups()
    if measure not in MEASURES:
        raise CriterionError(f"criterion {text!r}: unknown measure {measure!r} ({forms})")
    if op != MEASURES[measure][0]:
        raise CriterionError(f"criterion {text!r}: {measure} takes {MEASURES[measure][0]}")
    threshold = float(number)
    if percent and measure != "agree":
        raise CriterionError(f"criterion {text!r}: only agree is in percent")
    if measure == "agree" and threshold > 100:
        raise CriterionError(f"criterion {text!r}: agreement is at most 100%")
    return Criterion(measure, threshold)

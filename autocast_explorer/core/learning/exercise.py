"""The tutorial's closing exercise, graded against the measured dtype of the Linear layers.

The answer key is the live result, not a fixed string: on a CPU where autocast gives another
dtype, that dtype is the right answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from autocast_explorer.core.learning.lesson_checks import (
    autocast_dtypes,
    describe_groups,
    dtype_groups,
    linear_layers,
)

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult


@dataclass(frozen=True)
class Grade:
    """How an answer to the exercise compares with what was measured."""

    answer: str
    expected: str
    correct: bool
    explanation: str


@dataclass(frozen=True)
class Exercise:
    """The tutorial's closing question, graded against the live result, not an answer key."""

    question: str
    choices: tuple[str, ...]

    def expected(self, result: ExperimentResult) -> str:
        """The dtype most Linear layers returned under autocast in `result`."""
        if result.autocast_error:
            raise ValueError("the autocast forward raised: no autocast dtype to grade against")
        linears = linear_layers(result)
        if not linears:
            raise ValueError("the result has no Linear layers to grade against")
        return dtype_groups(linears, lambda la: autocast_dtypes(la).out_dtype)[0][0]

    def choices_for(self, result: ExperimentResult) -> tuple[str, ...]:
        """The choices, plus the measured answer should it be one nobody expected."""
        measured = self.expected(result)
        return self.choices if measured in self.choices else (*self.choices, measured)

    def grade(self, answer: str, result: ExperimentResult) -> Grade:
        given = answer.strip().removeprefix("torch.").lower()
        try:
            expected = self.expected(result)
        except ValueError:
            why = (
                "The autocast forward raised in this run, so there is nothing to grade by."
                if result.autocast_error
                else "This result records no Linear layers to grade by."
            )
            return Grade(given, "", False, why)
        linears = linear_layers(result)
        evidence = (
            f"Measured in this run (autocast dtype {result.config.dtype}): "
            + describe_groups(linears, lambda la: autocast_dtypes(la).out_dtype, "returned")
            + "."
        )
        if given == expected:
            explanation = f"Correct: {expected}. {evidence}"
        elif not given:
            explanation = f"No answer given; the measured answer is {expected}. {evidence}"
        else:
            explanation = f"Not quite: the measurement says {expected}, not {given}. {evidence}"
        return Grade(given, expected, given == expected, explanation)


EXERCISE = Exercise(
    question='Under torch.autocast("cpu"), which dtype does a Linear layer use for its maths?',
    choices=("float32", "bfloat16", "float16", "float64"),
)

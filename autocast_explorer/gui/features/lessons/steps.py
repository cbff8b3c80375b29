"""What a lesson step runs and what it leaves: its config, the worker task, the run kept.

Plain functions and data, no widgets: the panel decides where they are shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from autocast_explorer.core.learning.lessons import EXERCISE, Lesson, LessonOutcome
from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.learning.lessons import LessonRun, Probe
    from autocast_explorer.gui.tasks.runner import TaskState

#: Fields a step takes from the controls instead of the lesson: how to measure, not what.
MEASUREMENT_FIELDS = ("min_time", "max_time", "threads", "allow_slow", "memory_budget_mb")


def step_config(lesson: Lesson, current: ExperimentConfig | None) -> ExperimentConfig:
    """The lesson's config with the measurement settings of `current` (if valid)."""
    if current is None:
        return lesson.config
    return lesson.config.replace(**{f: getattr(current, f) for f in MEASUREMENT_FIELDS})


def lesson_task(lesson: Lesson, config: ExperimentConfig, state: TaskState) -> LessonRun:
    """One lesson step on the worker thread: the run, the probe and the check (all core)."""
    from autocast_explorer.core.learning.lessons import run_lesson

    return run_lesson(
        lesson, config, progress=state.set_progress, cancel=state.is_interruption_requested
    )


@dataclass(frozen=True)
class StepRun:
    """What one finished step measured: the result, the probe (if any) and the outcome."""

    lesson: Lesson
    result: ExperimentResult
    probe: Probe | None
    outcome: LessonOutcome


def exercise_choices(result: ExperimentResult) -> tuple[str, ...]:
    """The exercise's answers for this result's layers (the fixed list if it has none)."""
    try:
        return EXERCISE.choices_for(result)
    except ValueError:
        return EXERCISE.choices


def match_line(outcome: LessonOutcome, tutorial: bool) -> tuple[str, str]:
    """(sentence, colour) saying whether this run bears out the claim; `tutorial` names whose
    claim it is (the tutorial's, or a common assumption)."""
    if not outcome.graded:
        return "– Not graded: this measurement cannot tell (see above).", style.MUTED
    if outcome.matches_tutorial:
        holds = "✓ Here the tutorial's claim holds." if tutorial else "✓ Here the assumption holds."
        return holds, style.OK
    differs = (
        "≠ On this machine the measurement differs from the tutorial."
        if tutorial
        else "≠ On this machine the measurement contradicts the assumption."
    )
    return differs, style.WARN

"""What the Sweeps tab runs on the worker thread: core's sweep, its progress thinned out
(gui/tasks/throttle.py).

Kept apart from the tab so the thread-side code is one small piece with no widgets in it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autocast_explorer.gui.tasks.throttle import ThrottledProgress

__all__ = ["ThrottledProgress", "sweep_task"]

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.sweeps.result import SweepResult
    from autocast_explorer.core.sweeps.spec import SweepSpec
    from autocast_explorer.gui.tasks.runner import TaskState


def sweep_task(config: ExperimentConfig, spec: SweepSpec, state: TaskState) -> SweepResult:
    """On the worker thread: core's sweep, each point streamed through `set_partial`; a long
    sweep's forecast is a question to the tab first (TaskState.ask)."""
    from autocast_explorer.core.sweeps.runner import run_spec

    return run_spec(
        config,
        spec,
        progress=ThrottledProgress(state),
        cancel=state.is_interruption_requested,
        on_point=state.set_partial,
        confirm=state.ask,
    )

"""What the Plan tab runs on the worker thread: core's search and its verification.

Both are reached through a `PlanBackend`, the tab's seam: the window uses core's (imported when
a task runs: the search imports torch, which the first paint must not wait for), tests give one
that returns documents they made. No widgets here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from autocast_explorer.gui.tasks.throttle import ThrottledProgress

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.planning.criterion import Criterion
    from autocast_explorer.core.planning.document import PlanDocument
    from autocast_explorer.core.planning.verify import Verification
    from autocast_explorer.gui.tasks.runner import TaskState


#: make_plan(config, criterion, budget_s, progress=None, cancel=None) -> PlanDocument
MakePlan = Callable[..., "PlanDocument"]
#: verify_plan(plan, cancel=None) -> Verification
VerifyPlan = Callable[..., "Verification"]


def core_make_plan(
    config: ExperimentConfig, criterion: Criterion, budget_s: float, **callbacks: Any
) -> PlanDocument:
    """core.planning.search.make_plan (progress and cancel passed on), its budget counted from
    this call on: importing the search is part of it."""
    started = time.monotonic()
    from autocast_explorer.core.planning.search import make_plan

    plan: PlanDocument = make_plan(config, criterion, budget_s, started=started, **callbacks)
    return plan


def core_verify_plan(plan: PlanDocument, **callbacks: Any) -> Verification:
    """core.planning.verify.verify_plan (cancel passed on)."""
    from autocast_explorer.core.planning.verify import verify_plan

    verification: Verification = verify_plan(plan, **callbacks)
    return verification


@dataclass(frozen=True)
class PlanBackend:
    """The two calls the Plan tab makes of core; replace it to run the tab on fakes."""

    make_plan: MakePlan = core_make_plan
    verify_plan: VerifyPlan = core_verify_plan


def plan_task(
    backend: PlanBackend,
    config: ExperimentConfig,
    criterion: Criterion,
    budget_s: float,
    state: TaskState,
) -> PlanDocument:
    """On the worker thread: the search, its progress (thinned out: the search reports every
    timing block) and the Cancel button wired in."""
    return backend.make_plan(
        config,
        criterion,
        budget_s,
        progress=ThrottledProgress(state),
        cancel=state.is_interruption_requested,
    )


def verify_task(backend: PlanBackend, plan: PlanDocument, state: TaskState) -> Verification:
    """On the worker thread: the plan applied again in a fresh process, its criterion checked."""
    return backend.verify_plan(plan, cancel=state.is_interruption_requested)

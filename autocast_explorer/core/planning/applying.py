"""A plan applied to the experiment: the config whose next run measures the chosen candidate.

The window's Apply sets the experiment's state to it; the run then shows the plan beside plain
float32 eager, as every run does. Torch-free (the window may apply a plan while torch loads).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from autocast_explorer.core.experiment.route_kinds import route_names
from autocast_explorer.core.runtime.dtypes import DTYPES

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.planning.document import PlanDocument


def applied_config(plan: PlanDocument) -> ExperimentConfig:
    """The config the plan was made for, set to run its chosen candidate: its threads; a lower
    dtype's dtype and keep-set (module paths, the user's own among them); a float32 choice keeps
    the config's dtype and keep-set (its lower side is not the plan); and the routes with the
    chosen one measured (every route the config measured stays, in the routes' order)."""
    chosen = plan.chosen
    changes: dict[str, Any] = {"threads": chosen.threads}
    if chosen.dtype in DTYPES:  # a lower precision (float32 is not among them)
        changes["dtype"] = chosen.dtype
        changes["keep_float32"] = tuple(chosen.keep_float32)
    routes = plan.config.routes
    if chosen.route not in routes:
        changes["routes"] = tuple(r for r in route_names() if r in (*routes, chosen.route))
    return plan.config.replace(**changes)

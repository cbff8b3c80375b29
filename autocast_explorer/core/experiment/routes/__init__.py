"""Routes to a lower precision beside eager autocast, each measured plain vs lower.

One module per route (eager.py, compiled.py, implicit.py), each registered in route_kinds.py,
which names the module whose `measure` `measure_route` calls. Every route's outputs are compared
with eager float32 (error and agreement). A route that fails here is a finding carrying torch's
message, not a failed run. Routes work on any nn.Module and input.
"""

from autocast_explorer.core.experiment.routes.common import Reference, RouteCall, measure_route
from autocast_explorer.core.experiment.routes.eager import eager_route
from autocast_explorer.core.experiment.routes.result import (
    RouteAgreement,
    RouteResult,
    routes_under,
)

__all__ = [
    "Reference",
    "RouteAgreement",
    "RouteCall",
    "RouteResult",
    "eager_route",
    "measure_route",
    "routes_under",
]

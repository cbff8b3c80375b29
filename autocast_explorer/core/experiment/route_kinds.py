"""The routes to a lower precision, described without torch: one registration each.

A route is one module under core/experiment/routes/ (its `measure`, which needs torch) plus one
`register(RouteKind(...))` below. Everything that names routes reads this registry: the config's
validation and schema, the CLI's `--routes` help, the window's route checkboxes, the sweep's
speedup curves, the Routes tab, the tables and the report. Registration order is route order:
the first route (eager) is the reference every other route is compared with.

Torch-free and below the config: the window validates a config while torch is still loading.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class RouteKind:
    """What the program says about one route before anything is measured.

    `details` maps the RouteResult fields only this route fills (JSON keys of `routes[]`) to
    what they hold. `tick` names the lower side under its latency bar (empty: its dtype).
    `evidence` is the detail that is empty when the lower side computed float32 after all.
    """

    name: str
    label: str  # what the lower side computes, as tables say it: "compiled autocast"
    help: str  # one line: the CLI's --routes help and the Routes tab's invitation
    tip: str  # the window's checkbox tooltip
    color: str  # its curve on the sweep's speedup chart (eager's is the chart's main curve)
    module: str  # whose `measure(...)` measures it, imported then (eager's: the engine's run)
    trains: bool = False  # training mode measures it
    compiles: bool = False  # its first calls compile the model (the forecast adds a compile)
    details: Mapping[str, str] = field(default_factory=dict)
    tick: str = ""
    evidence: str = ""


_KINDS: dict[str, RouteKind] = {}


def register(kind: RouteKind) -> RouteKind:
    """Add a route after the ones registered before it; a name or detail field already taken
    is refused (each detail belongs to one route)."""
    if not kind.name.isidentifier():  # --routes splits at commas; objectNames hold the name
        raise ValueError(f"route name {kind.name!r} is not an identifier")
    if kind.name in _KINDS:
        raise ValueError(f"route {kind.name!r} is registered already")
    for other in _KINDS.values():
        shared = set(other.details) & set(kind.details)
        if shared:
            raise ValueError(f"route {kind.name!r}: {', '.join(sorted(shared))} is {other.name}'s")
    if kind.evidence and kind.evidence not in kind.details:
        raise ValueError(f"route {kind.name!r}: evidence {kind.evidence!r} is not its detail")
    # A read-only copy of the details: a registered route does not change under its readers.
    _KINDS[kind.name] = dataclasses.replace(kind, details=MappingProxyType(dict(kind.details)))
    return _KINDS[kind.name]


def unregister(name: str) -> None:
    """Remove a route (tests register a fake one and take it away again)."""
    if name == reference_route():
        raise ValueError(f"{name} is the reference route")
    del _KINDS[name]


def route_kinds() -> tuple[RouteKind, ...]:
    """Every route, the reference first."""
    return tuple(_KINDS.values())


def route_names() -> tuple[str, ...]:
    return tuple(_KINDS)


def route_kind(name: str) -> RouteKind | None:
    """The route called `name`; None for a name this program does not know (a newer file's)."""
    return _KINDS.get(name)


def reference_route() -> str:
    """The route every other is compared with: the first registered (eager)."""
    return next(iter(_KINDS))


def other_routes() -> tuple[RouteKind, ...]:
    """The routes a run may add beside the reference."""
    return route_kinds()[1:]


def routes_in_words() -> str:
    """'default eager: float32 vs autocast; compiled: …': every route's one line, as `--routes`'
    help lists them (the reference is the default)."""
    reference = reference_route()
    return "; ".join(
        f"{'default ' if kind.name == reference else ''}{kind.name}: {kind.help}"
        for kind in _KINDS.values()
    )


def routes_refusal(routes: Any, mode: str) -> str | None:
    """The config's `routes` rule: known, distinct names, the reference among them (every
    route is compared with its float32 output); in training mode only routes that train."""
    known, reference = route_names(), reference_route()
    if not isinstance(routes, tuple) or not routes:
        return f"must be a list of {', '.join(known)}"
    for name in routes:
        if name not in known:
            return f"must be some of {', '.join(known)} (got {name!r})"
    if len(set(routes)) != len(routes):
        return f"each route at most once (got {', '.join(routes)})"
    if reference not in routes:
        return f"must include {reference}: every route is compared with {reference} float32"
    trained = [kind for kind in route_kinds() if kind.trains]
    if mode == "train" and not set(routes) <= {kind.name for kind in trained}:
        words = " and ".join(f"{kind.name} {kind.label}" for kind in trained)
        return f"training mode measures {words} only"
    return None


def routes_help() -> str:
    """The `routes` field's help sentence (--routes, the schema, the docs)."""
    return (
        "ways to a lower precision, each timed float32 vs lower and compared with "
        f"{reference_route()} float32: {', '.join(route_names())} ({routes_in_words()})"
    )


def routes_schema() -> dict[str, Any]:
    """The `routes` field's JSON Schema, from the registry as it is when the schema is made."""
    return {
        "type": "array",
        "items": {"enum": list(route_names())},
        "minItems": 1,
        "uniqueItems": True,
    }


def route_label(name: str) -> str:
    """What the route's lower side computes ("compiled autocast"); a route unknown here by its
    name."""
    kind = route_kind(name)
    return name if kind is None else kind.label


def detail_description(key: str) -> str:
    """'compiled: first calls of both sides': a detail field's description, by its route."""
    for kind in _KINDS.values():
        if key in kind.details:
            return f"{kind.name}: {kind.details[key]}"
    raise KeyError(f"no route fills {key!r}")


def routes_filling(key: str) -> tuple[str, ...]:
    """The routes whose results carry the detail `key` (compile_s: compiled)."""
    return tuple(kind.name for kind in _KINDS.values() if key in kind.details)


_ROUTES = "autocast_explorer.core.experiment.routes"

register(
    RouteKind(
        name="eager",
        label="autocast",
        help="float32 vs autocast",
        tip="Always measured: float32 vs torch.autocast around the forward; every other route "
        "is compared with its float32 output.",
        color="#2166ac",
        module=f"{_ROUTES}.eager",
        trains=True,
    )
)
register(
    RouteKind(
        name="compiled",
        label="compiled autocast",
        help="torch.compile with autocast inside",
        tip="Also measure torch.compile (inductor): the float32 forward vs one with autocast "
        "inside. Compile time is measured apart and cannot be cancelled while inductor builds "
        "(the first compile in a session takes longest). Needs a C++ compiler.",
        color="#7b3fa0",
        module=f"{_ROUTES}.compiled",
        compiles=True,
        details={
            "compile_s": "first calls of both sides",
            "compile_estimate_s": "the guard's compile forecast",
            "graphs": "graphs the first calls compiled",
            "recompiles": "graphs compiled while timing",
            "graph_ops": "torch ops Dynamo captured",
        },
    )
)
register(
    RouteKind(
        name="implicit",
        label="fp32_precision=bf16",
        help="float32 with oneDNN's fp32_precision=bf16",
        tip="Also measure float32 with oneDNN's fp32_precision='bf16' for matmul, conv and rnn "
        "(tensors stay float32; GEMMs may use bf16 maths). The Routes tab says whether oneDNN "
        "really did. Restored after the run.",
        color="#1b7f79",
        module=f"{_ROUTES}.implicit",
        details={"kernels": "oneDNN GEMMs in fpmath mode bf16"},
        tick="bf16 maths",
        evidence="kernels",
    )
)

"""A route's result and its document part: what every route fills, plus the detail fields a
route's registration (route_kinds.py) says are its own."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import Field

from autocast_explorer.core.documents.field_types import (
    Flag,
    MultilineText,
    NullableFraction,
    NullableNonNegative,
    NullableNumber,
    Omittable,
    Text,
    TextMap,
    Texts,
    Whole,
    WholeMap,
)
from autocast_explorer.core.documents.model import Part, build, dump, nan_if_none
from autocast_explorer.core.experiment.agreement import Agreement
from autocast_explorer.core.experiment.certainty import (
    IntervalPart,
    SpeedCall,
    TimingEvidence,
    judge,
    speedup_figure,
)
from autocast_explorer.core.experiment.interval import SpeedupInterval, ratio_text
from autocast_explorer.core.experiment.route_kinds import (
    detail_description,
    route_kind,
    route_names,
)
from autocast_explorer.core.experiment.timing import LatencyPart, LatencyStats
from autocast_explorer.core.numerics.layer_error import LayerError, LayerErrorPart


@dataclass(frozen=True)
class RouteAgreement:
    """A route's lower output against eager float32: argmax agreement and closeness."""

    rows: int
    agree: int
    fraction: float
    max_abs_diff: float
    cosine: float
    allclose: bool

    @classmethod
    def of(cls, a: Agreement) -> RouteAgreement:
        return cls(a.rows, a.agree, a.fraction, a.max_abs_diff, a.cosine, a.allclose)

    def to_part(self) -> RouteAgreementPart:
        return build(
            RouteAgreementPart,
            rows=self.rows,
            agree=self.agree,
            fraction=self.fraction,
            max_abs_diff=_finite(self.max_abs_diff),
            cosine=_finite(self.cosine),
            allclose=self.allclose,
        )

    @classmethod
    def from_part(cls, part: RouteAgreementPart) -> RouteAgreement:
        return cls(
            rows=part.rows,
            agree=part.agree,
            fraction=nan_if_none(part.fraction),
            max_abs_diff=nan_if_none(part.max_abs_diff),
            cosine=nan_if_none(part.cosine),
            allclose=part.allclose,
        )


@dataclass(frozen=True)
class RouteResult:
    """One route measured: latency of its float32 and lower side, and what the lower side did.

    `lower_dtype` is what the lower side computes in; `output_dtype` what each side returned.
    `error` and `agreement` compare the lower output with eager float32, `plain_error` the
    route's own float32 output with eager float32 (a compiled graph may reorder sums).
    The fields after `agreement` up to `kernels` are details: each belongs to the one route
    whose registration lists it (route_kinds.py; compiled: compile time, graphs, recompiles,
    graph ops; implicit: the GEMMs oneDNN ran with bf16 maths); other routes leave them empty.
    `finding` says what happened in words (why a side is missing, what did not change).
    """

    name: str
    lower_dtype: str
    plain: LatencyStats | None = None
    lower: LatencyStats | None = None
    output_dtype: dict[str, str] = field(default_factory=dict)
    error: LayerError | None = None
    plain_error: LayerError | None = None
    agreement: RouteAgreement | None = None
    compile_s: float | None = None
    compile_estimate_s: float | None = None
    graphs: int | None = None
    recompiles: int | None = None
    graph_ops: dict[str, int] = field(default_factory=dict)
    kernels: tuple[str, ...] = ()
    finding: str = ""
    #: The 95% interval of the paired float32 ÷ lower ratio (None: not timed, or a
    #: file written before routes had one).
    interval: SpeedupInterval | None = None

    @property
    def speedup(self) -> float:
        """The paired float32 ÷ lower ratio, as a run's speedup (certainty.
        speedup_figure); NaN when a side was not timed."""
        if self.plain is None or self.lower is None:
            return float("nan")
        return speedup_figure(self.plain.median_ms, self.lower.median_ms, self._evidence())

    @property
    def call(self) -> SpeedCall:
        """faster / slower / same / can't tell / too noisy, from the interval as for a run."""
        return judge(self.speedup, self._evidence())

    @property
    def computed_dtype(self) -> str:
        """What the lower side really computed in: `lower_dtype`, or float32 where the route's
        evidence detail is empty (implicit: oneDNN lowered no GEMM)."""
        kind = route_kind(self.name)
        if kind is not None and kind.evidence and not getattr(self, kind.evidence):
            return "float32"
        return self.lower_dtype

    def speedup_text(self) -> str:
        """'1.72× (95%: 1.66–1.79)', '… · too noisy to tell', or '—' when not timed."""
        if not math.isfinite(self.speedup):
            return "—"
        text = f"{ratio_text(self.speedup)}×"
        if self.interval is not None:
            text += f" ({self.interval.text()})"
        return text + (" · too noisy to tell" if self.call.too_noisy else "")

    def _evidence(self) -> TimingEvidence | None:
        return None if self.interval is None else TimingEvidence(interval=self.interval)

    def to_part(self) -> RoutePart:
        def part(value: Any) -> Any:
            return None if value is None else value.to_part()

        return build(
            RoutePart,
            name=self.name,
            lower_dtype=self.lower_dtype,
            plain=part(self.plain),
            lower=part(self.lower),
            speedup=_finite(self.speedup),
            output_dtype=dict(self.output_dtype),
            error=part(self.error),
            plain_error=part(self.plain_error),
            agreement=part(self.agreement),
            compile_s=self.compile_s,
            compile_estimate_s=self.compile_estimate_s,
            graphs=self.graphs,
            recompiles=self.recompiles,
            graph_ops=dict(self.graph_ops),
            kernels=tuple(self.kernels),
            finding=self.finding,
            speedup_interval=IntervalPart.of(self.interval),
        )

    def to_dict(self) -> dict[str, Any]:
        return dump(self.to_part())

    @classmethod
    def from_part(cls, part: RoutePart) -> RouteResult:
        return cls(
            name=part.name,
            lower_dtype=part.lower_dtype,
            plain=None if part.plain is None else LatencyStats.from_part(part.plain),
            lower=None if part.lower is None else LatencyStats.from_part(part.lower),
            output_dtype=dict(part.output_dtype or {}),
            error=None if part.error is None else LayerError.from_part(part.error),
            plain_error=(
                None if part.plain_error is None else LayerError.from_part(part.plain_error)
            ),
            agreement=(
                None if part.agreement is None else RouteAgreement.from_part(part.agreement)
            ),
            compile_s=part.compile_s,
            compile_estimate_s=part.compile_estimate_s,
            graphs=part.graphs,
            recompiles=part.recompiles,
            graph_ops=dict(part.graph_ops or {}),
            kernels=tuple(part.kernels or ()),
            finding=part.finding,
            interval=None if part.speedup_interval is None else part.speedup_interval.interval(),
        )


def _finite(value: float) -> float | None:
    """JSON has no NaN: an undefined ratio is written null."""
    return value if math.isfinite(value) else None


class RouteAgreementPart(Part):
    """A route's lower output against eager float32 (argmax agreement, closeness)."""

    rows: Whole
    agree: Whole
    fraction: NullableFraction
    max_abs_diff: NullableNonNegative = None
    cosine: NullableNumber = None
    allclose: Flag


class RoutePart(Part):
    """One entry of `routes[]` (a result's, or a sweep point's): a route measured float32 vs
    its lower side and compared with eager float32."""

    name: Annotated[Text, Field(description=" | ".join(route_names()))]
    lower_dtype: Annotated[Text, Field(description="what the lower side computes in")]
    plain: LatencyPart | None = Field(default=None, description="null: not timed")
    lower: LatencyPart | None = Field(default=None, description="null: not timed (finding)")
    speedup: Annotated[
        NullableNonNegative,
        Field(description="paired float32 ÷ lower ratio (speedup_interval.estimate)"),
    ] = None
    output_dtype: Annotated[
        Omittable[TextMap], Field(description="dtype each side returned (plain, lower)")
    ] = None
    error: LayerErrorPart | None = Field(
        default=None, description="the lower output against eager float32"
    )
    plain_error: LayerErrorPart | None = Field(
        default=None, description="the route's float32 output against eager float32"
    )
    agreement: RouteAgreementPart | None = None
    # Details: each route's own (route_kinds.py), described by its registration.
    compile_s: Annotated[
        NullableNonNegative, Field(description=detail_description("compile_s"))
    ] = None
    compile_estimate_s: Annotated[
        NullableNonNegative, Field(description=detail_description("compile_estimate_s"))
    ] = None
    graphs: Annotated[Whole, Field(description=detail_description("graphs"))] | None = None
    recompiles: Annotated[Whole, Field(description=detail_description("recompiles"))] | None = None
    graph_ops: Annotated[
        Omittable[WholeMap], Field(description=detail_description("graph_ops"))
    ] = None
    kernels: Annotated[Omittable[Texts], Field(description=detail_description("kernels"))] = None
    finding: Annotated[MultilineText, Field(description="what happened, in words")] = ""
    speedup_interval: IntervalPart | None = Field(
        default=None, description="null: not timed, or written before routes had intervals"
    )


def routes_to_parts(routes: tuple[RouteResult, ...]) -> tuple[RoutePart, ...]:
    return tuple(route.to_part() for route in routes)


def routes_from_parts(parts: tuple[RoutePart, ...] | None) -> tuple[RouteResult, ...]:
    """The `routes` list of a document (absent in files written before routes: empty)."""
    return tuple(RouteResult.from_part(part) for part in parts or ())

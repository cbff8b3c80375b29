"""A route's result, as the program holds it and the file writes it: what every route fills,
plus the detail fields a route's registration (route_kinds.py) says are its own."""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar

from pydantic import Field, model_validator

from autocast_explorer.core.documents.field_types import (
    Flag,
    Measured,
    MeasuredFraction,
    MeasuredNonNegative,
    MultilineText,
    NullableNonNegative,
    Text,
    TextMap,
    Texts,
    Whole,
    WholeMap,
)
from autocast_explorer.core.documents.held import derive, write_always
from autocast_explorer.core.documents.model import Part, dump
from autocast_explorer.core.experiment.agreement import Agreement
from autocast_explorer.core.experiment.certainty import (
    SpeedCall,
    TimingEvidence,
    WritesVerdict,
    WrittenVerdict,
    judge,
    speedup_figure,
)
from autocast_explorer.core.experiment.interval import SpeedupInterval
from autocast_explorer.core.experiment.pace import SPEED_CALL_WORDS
from autocast_explorer.core.experiment.route_kinds import (
    detail_description,
    route_kind,
    route_names,
)
from autocast_explorer.core.experiment.timing import LatencyStats
from autocast_explorer.core.hardware.load import MachineLoad
from autocast_explorer.core.numerics.layer_error import LayerError


class RouteAgreement(Part):
    """A route's lower output against eager float32: argmax agreement and closeness."""

    rows: Whole
    agree: Whole
    fraction: MeasuredFraction
    max_abs_diff: MeasuredNonNegative = Field(default=None, validate_default=True)
    cosine: Measured = Field(default=None, validate_default=True)
    allclose: Flag

    @classmethod
    def of(cls, a: Agreement) -> RouteAgreement:
        return cls(
            rows=a.rows,
            agree=a.agree,
            fraction=a.fraction,
            max_abs_diff=a.max_abs_diff,
            cosine=a.cosine,
            allclose=a.allclose,
        )


class RouteResult(WritesVerdict):
    """One route measured: latency of its float32 and lower side, and what the lower side did
    (one entry of `routes[]`, a result's or a sweep point's).

    `lower_dtype` is what the lower side computes in; `output_dtype` what each side returned.
    `error` and `agreement` compare the lower output with eager float32, `plain_error` the
    route's own float32 output with eager float32 (a compiled graph may reorder sums).
    The fields after `agreement` up to `kernels` are details: each belongs to the one route
    whose registration lists it (route_kinds.py; compiled: compile time, graphs, recompiles,
    graph ops; implicit: the GEMMs oneDNN ran with bf16 maths); other routes leave them empty.
    `finding` says what happened in words (why a side is missing, what did not change).
    Every key is written, empty or not.
    """

    schema_name: ClassVar[str] = "route"

    name: Annotated[Text, Field(description=" | ".join(route_names()))]
    lower_dtype: Annotated[Text, Field(description="what the lower side computes in")]
    plain: LatencyStats | None = Field(default=None, description="null: not timed")
    lower: LatencyStats | None = Field(default=None, description="null: not timed (finding)")
    #: The paired float32 ÷ lower ratio, as a run's speedup (certainty.speedup_figure); NaN
    #: when a side was not timed. Derived from the sides (a file's own is not read).
    speedup: MeasuredNonNegative = Field(
        default=None,
        validate_default=True,
        description="paired float32 ÷ lower ratio (speedup_interval.estimate)",
    )
    output_dtype: Annotated[
        TextMap, Field(description="dtype each side returned (plain, lower)")
    ] = Field(default_factory=dict, json_schema_extra={"default": None})
    error: LayerError | None = Field(
        default=None, description="the lower output against eager float32"
    )
    plain_error: LayerError | None = Field(
        default=None, description="the route's float32 output against eager float32"
    )
    agreement: RouteAgreement | None = None
    # Details: each route's own (route_kinds.py), described by its registration.
    compile_s: Annotated[
        NullableNonNegative, Field(description=detail_description("compile_s"))
    ] = None
    compile_estimate_s: Annotated[
        NullableNonNegative, Field(description=detail_description("compile_estimate_s"))
    ] = None
    graphs: Annotated[Whole, Field(description=detail_description("graphs"))] | None = None
    recompiles: Annotated[Whole, Field(description=detail_description("recompiles"))] | None = None
    graph_ops: Annotated[WholeMap, Field(description=detail_description("graph_ops"))] = Field(
        default_factory=dict, json_schema_extra={"default": None}
    )
    kernels: Annotated[Texts, Field(description=detail_description("kernels"))] = Field(
        default=(), json_schema_extra={"default": None}
    )
    finding: Annotated[MultilineText, Field(description="what happened, in words")] = ""
    #: The 95% interval of the paired float32 ÷ lower ratio (None: not timed, or a file
    #: written before routes had one).
    interval: Annotated[
        SpeedupInterval | None,
        Field(
            alias="speedup_interval",
            description="null: not timed, or written before routes had intervals",
        ),
    ] = None
    verdict: Annotated[
        WrittenVerdict,
        Field(
            description="the route's speed call under the run's load (written, never read "
            "back); null: a side was not timed"
        ),
    ] = None

    @model_validator(mode="after")
    def _written_whole(self) -> RouteResult:
        derive(self, speedup=self._figure())
        write_always(self, *type(self).model_fields)
        return self

    def _figure(self) -> float:
        if self.plain is None or self.lower is None:
            return math.nan
        return speedup_figure(self.plain.median_ms, self.lower.median_ms, self._evidence())

    @property
    def call(self) -> SpeedCall:
        """faster / slower / same / can't tell / too noisy, from the interval as for a run."""
        return self.call_under()

    def call_under(self, load: MachineLoad | None = None, threads: int | None = None) -> SpeedCall:
        """The call with the machine's `load` during the run (the run's own reading: a route is
        timed in the same run) and its thread count, by the rules a run's call follows."""
        if self.plain is None or self.lower is None:
            return judge(math.nan, None)
        evidence = TimingEvidence(interval=self.interval, load=load)
        medians = self.plain.median_ms / self.lower.median_ms if self.lower.median_ms else None
        return judge(self.speedup, evidence, threads, medians_ratio=medians)

    @property
    def computed_dtype(self) -> str:
        """What the lower side really computed in: `lower_dtype`, or float32 where the route's
        evidence detail is empty (implicit: oneDNN lowered no GEMM)."""
        kind = route_kind(self.name)
        if kind is not None and kind.evidence and not getattr(self, kind.evidence):
            return "float32"
        return self.lower_dtype

    def speedup_text(self, call: SpeedCall | None = None) -> str:
        """'1.72× faster (95%: 1.66–1.79)', 'about 7× slower · the machine was busy', 'can't
        tell' or 'too noisy to tell' (no figure), '—' when not timed; `call`: this route's
        call under the run's load (`call_under`), else its own."""
        call = self.call if call is None else call
        if call.kind == "untimed":
            return "—"
        if not call.graded:
            return SPEED_CALL_WORDS[call.kind]
        text = call.figure_text() + call.interval_text(slower=call.kind == "slower")
        return text + (f" · {call.rough}" if call.rough else "")

    def _evidence(self) -> TimingEvidence | None:
        return None if self.interval is None else TimingEvidence(interval=self.interval)

    def to_dict(self) -> dict[str, Any]:
        return dump(self)

    def under(self, load: MachineLoad | None, threads: int | None) -> RouteResult:
        """This route with its verdict under the run's `load` and `threads`, as a document
        writes it (the verdict is written, never read back: readers call again)."""
        return self.with_verdict(self.call_under(load, threads))


def routes_under(
    routes: tuple[RouteResult, ...], load: MachineLoad | None, threads: int | None
) -> tuple[RouteResult, ...]:
    """The `routes` list of a document; `load` and `threads`: the run's, for each verdict."""
    return tuple(route.under(load, threads) for route in routes)

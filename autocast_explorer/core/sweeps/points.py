"""One measured point of a sweep, as the program holds it and the sweep file writes it.

A point is plain and autocast latency for one config of the sweep; its FLOPs, bytes and
intensity follow from that config (an MLP's from its widths), so files store them only for
readers and the roofline is drawn again from the points.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, ClassVar

from pydantic import Field, SerializerFunctionWrapHandler, field_serializer, model_validator
from pydantic.json_schema import SkipJsonSchema

from autocast_explorer.core.documents.field_types import (
    MeasuredNonNegative,
    NonNegative,
    Omittable,
    PositiveWhole,
    PositiveWholes,
    Whole,
)
from autocast_explorer.core.documents.held import (
    Carried,
    DerivingPart,
    EmptyWhenNull,
    derive,
    leave_out_empty,
)
from autocast_explorer.core.documents.model import Part, dump
from autocast_explorer.core.experiment.certainty import (
    SpeedCall,
    TimingEvidence,
    judge,
    speedup_figure,
)
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families import family
from autocast_explorer.core.experiment.input_record import InputRecord
from autocast_explorer.core.experiment.interval import SpeedupInterval
from autocast_explorer.core.experiment.routes import RouteResult, routes_under
from autocast_explorer.core.experiment.timing import LatencyStats
from autocast_explorer.core.hardware.load import MachineLoad
from autocast_explorer.core.sweeps.roofline import bytes_moved, family_bytes_moved, linear_flops


class PointLatency(DerivingPart, TimingEvidence):
    """A point's latency: both modes, the speedup (derived from them and the interval), and the
    paired timing's evidence."""

    derived_keys: ClassVar[tuple[str, ...]] = ("speedup",)

    plain: LatencyStats
    autocast: LatencyStats
    speedup: MeasuredNonNegative = Field(default=None, validate_default=True)

    @model_validator(mode="after")
    def _speedup_of_modes(self) -> PointLatency:
        self.require_in_files()
        evidence = TimingEvidence.from_section(self)
        figure = speedup_figure(self.plain.median_ms, self.autocast.median_ms, evidence)
        derive(self, speedup=figure)
        return self

    @classmethod
    def of(
        cls, plain: LatencyStats, autocast: LatencyStats, evidence: TimingEvidence | None
    ) -> PointLatency:
        """Both modes' statistics with the evidence of their paired timing (None: none)."""
        fields = evidence.to_fields() if evidence is not None else {}
        return cls(plain=plain, autocast=autocast, **fields)


class PerModeRate(Part):
    plain: NonNegative
    autocast: NonNegative


class PerModeBytes(Part):
    plain: Whole = 0
    autocast: Whole = 0


class SweepPoint(DerivingPart):
    """One measured point: plain and autocast latency for one config of the sweep (one entry of
    the sweep's `points`).

    `value` is the swept value (the batch along a grid row); `value2` the grid row's width.
    Its FLOPs, bytes moved and GFLOP/s are written for readers, derived from its config.
    """

    schema_name: ClassVar[str] = "point"
    derived_keys: ClassVar[tuple[str, ...]] = ("gflops",)

    index: Whole
    value: PositiveWhole
    value2: Annotated[
        Omittable[PositiveWhole],
        Field(alias="width", description="grid only: the row's hidden width"),
    ] = None
    batch: PositiveWhole
    widths: Annotated[
        PositiveWholes,
        Field(description="mlp points", json_schema_extra={"minItems": 2, "default": None}),
    ] = ()
    latency: PointLatency
    gflops: PerModeRate = Field(default_factory=lambda: PerModeRate(plain=0, autocast=0))
    flops: Whole = 0
    bytes: PerModeBytes | None = None
    intensity: PerModeRate | None = None
    #: What this point fed its model: a batch or sequence sweep feeds each point its own.
    input: Annotated[
        Omittable[InputRecord],
        Field(description="what this point fed its model (older files lack it)"),
    ] = None
    #: The config's routes beyond eager, measured at this point (`sweep --routes`).
    routes: Annotated[tuple[RouteResult, ...], EmptyWhenNull()] = Field(
        default=None,
        validate_default=True,
        description="sweep --routes: the point's routes but eager",
    )
    #: The sweep's autocast dtype ('' until its sweep places a point read from a file).
    dtype: Annotated[str, Carried(), SkipJsonSchema()] = Field(default="", exclude=True)
    #: The point's full config: its family counts FLOPs and bytes (an MLP's follow from widths).
    config: Annotated[ExperimentConfig | None, Carried(), SkipJsonSchema()] = Field(
        default=None, exclude=True
    )

    @model_validator(mode="after")
    def _work_of_config(self) -> SweepPoint:
        self.require_in_files()
        if self.dtype:
            derive(self, **self._work())
        leave_out_empty(self, "widths", "routes")
        return self

    def in_sweep(self, dtype: str, config: ExperimentConfig | None) -> SweepPoint:
        """This point read from a file, placed in its sweep: the sweep's dtype and the point's
        planned config (None: an MLP's widths say all), its work derived from them."""
        placed = self.model_copy(update={"dtype": dtype, "config": config})
        return placed.model_copy(update=placed._work())

    def _work(self) -> dict[str, Any]:
        """FLOPs, bytes moved, GFLOP/s and intensity of each mode, from the config (an MLP's
        from its widths): what the point writes for readers."""
        if self.config is not None:
            flops = family(self.config).flops(self.config)
            moved = (
                family_bytes_moved(self.config, None),
                family_bytes_moved(self.config, self.dtype),
            )
        else:
            flops = linear_flops(self.widths, self.batch)
            moved = (
                bytes_moved(self.widths, self.batch, None),
                bytes_moved(self.widths, self.batch, self.dtype),
            )
        return {
            "gflops": PerModeRate(
                plain=self.plain.gflops(flops), autocast=self.autocast.gflops(flops)
            ),
            "flops": flops,
            "bytes": PerModeBytes(plain=moved[0], autocast=moved[1]),
            "intensity": PerModeRate(plain=flops / moved[0], autocast=flops / moved[1]),
        }

    @property
    def plain(self) -> LatencyStats:
        return self.latency.plain

    @property
    def autocast(self) -> LatencyStats:
        return self.latency.autocast

    @property
    def evidence(self) -> TimingEvidence | None:
        """The speedup's interval, stalled blocks, load, why timing stopped (None: older
        files)."""
        return TimingEvidence.from_section(self.latency)

    @property
    def interval(self) -> SpeedupInterval | None:
        evidence = self.evidence
        return evidence.interval if evidence is not None else None

    @property
    def call(self) -> SpeedCall:
        """faster / slower / same / unclear / noisy for this point (certainty.judge)."""
        auto = self.autocast.median_ms
        medians = self.plain.median_ms / auto if auto > 0 else None
        return judge(self.speedup, self.evidence, medians_ratio=medians)

    def _load(self) -> MachineLoad | None:
        return self.evidence.load if self.evidence is not None else None

    @property
    def speedup(self) -> float:
        """The paired float32 ÷ autocast ratio (certainty.speedup_figure): above 1 means
        autocast was faster."""
        return self.latency.speedup

    @property
    def told_speedup(self) -> float:
        """The speedup a sentence may state from this point: NaN where its call is "can't
        tell" or "too noisy" (certainty.judge), so no verdict or crossover rests on it."""
        return self.speedup if self.call.graded else math.nan

    @property
    def gflops_plain(self) -> float:
        return self.gflops.plain

    @property
    def gflops_autocast(self) -> float:
        return self.gflops.autocast

    @property
    def bytes_plain(self) -> int:
        return self.bytes.plain if self.bytes is not None else 0

    @property
    def bytes_autocast(self) -> int:
        return self.bytes.autocast if self.bytes is not None else 0

    @property
    def intensity_plain(self) -> float:
        return self.intensity.plain if self.intensity is not None else 0.0

    @property
    def intensity_autocast(self) -> float:
        return self.intensity.autocast if self.intensity is not None else 0.0

    @field_serializer("latency", mode="wrap")
    def _verdict_written(
        self, latency: PointLatency, write: SerializerFunctionWrapHandler
    ) -> dict[str, Any]:
        """The point's speed verdict beside its evidence (written, never read back)."""
        written: dict[str, Any] = write(latency.with_verdict(self.call))
        return written

    @field_serializer("routes", mode="wrap")
    def _routes_written(
        self, routes: tuple[RouteResult, ...], write: SerializerFunctionWrapHandler
    ) -> Any:
        """Each route with its verdict under the point's load."""
        return write(routes_under(routes, self._load(), None))

    def to_dict(self) -> dict[str, Any]:
        return dump(self)


def roofline_work(points: Any) -> list[tuple[int, int, int, int, float, float]]:
    """(value, flops, bytes plain, bytes autocast, GFLOP/s plain, GFLOP/s autocast) per point
    whose call was not too noisy: a busy machine's rates are no fact about the CPU."""
    return [
        (
            p.value,
            p.flops,
            p.bytes_plain,
            p.bytes_autocast,
            p.gflops_plain,
            p.gflops_autocast,
        )
        for p in points
        if not p.call.too_noisy
    ]

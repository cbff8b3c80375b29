"""One measured point of a sweep: its document part, its figures and reading it back.

A point is plain and autocast latency for one config of the sweep; its FLOPs, bytes and
intensity follow from that config (an MLP's from its widths), so files store them only for
readers and the roofline is drawn again from the points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import Field

from autocast_explorer.core.documents.field_types import (
    NonNegative,
    NullableNonNegative,
    Omittable,
    PositiveWhole,
    PositiveWholes,
    Whole,
)
from autocast_explorer.core.documents.model import Part, build, dump
from autocast_explorer.core.documents.reader import DocumentFormatError, nan_to_none
from autocast_explorer.core.experiment.certainty import (
    EvidenceSection,
    SpeedCall,
    TimingEvidence,
    judge,
    speedup_figure,
)
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families import family
from autocast_explorer.core.experiment.interval import SpeedupInterval
from autocast_explorer.core.experiment.routes import (
    RoutePart,
    RouteResult,
    routes_from_parts,
    routes_to_parts,
)
from autocast_explorer.core.experiment.timing import LatencyPart, LatencyStats
from autocast_explorer.core.hardware.load import MachineLoad
from autocast_explorer.core.sweeps.roofline import bytes_moved, family_bytes_moved, linear_flops


# ---- the point's part of the sweep document (`points[…]`) -------------------------------------
class PointLatency(EvidenceSection):
    plain: LatencyPart
    autocast: LatencyPart
    speedup: NullableNonNegative


class PerModeRate(Part):
    plain: NonNegative
    autocast: NonNegative


class PerModeBytes(Part):
    plain: Whole = 0
    autocast: Whole = 0


class PointPart(Part):
    index: Whole
    value: PositiveWhole
    width: Annotated[
        Omittable[PositiveWhole], Field(description="grid only: the row's hidden width")
    ] = None
    batch: PositiveWhole
    widths: Annotated[
        Omittable[PositiveWholes],
        Field(description="mlp points", json_schema_extra={"minItems": 2}),
    ] = None
    latency: PointLatency
    gflops: PerModeRate
    flops: Whole = 0
    bytes: PerModeBytes | None = None
    intensity: PerModeRate | None = None
    routes: tuple[RoutePart, ...] | None = Field(
        default=None, description="sweep --routes: the point's routes but eager"
    )


@dataclass(frozen=True)
class SweepPoint:
    """One measured point: plain and autocast latency for one config of the sweep.

    `value` is the swept value (the batch along a grid row); `value2` the grid row's width.
    """

    index: int
    value: int
    value2: int | None
    batch: int
    widths: tuple[int, ...]
    dtype: str
    plain: LatencyStats
    autocast: LatencyStats
    #: The point's full config: its family counts FLOPs and bytes (an MLP's follow from widths).
    config: ExperimentConfig | None = field(default=None, compare=False)
    #: The config's routes beyond eager, measured at this point (`sweep --routes`).
    routes: tuple[RouteResult, ...] = ()
    #: The speedup's interval, stalled blocks, load, why timing stopped (None: older files).
    evidence: TimingEvidence | None = None

    @property
    def interval(self) -> SpeedupInterval | None:
        return self.evidence.interval if self.evidence is not None else None

    @property
    def call(self) -> SpeedCall:
        """faster / slower / same / unclear / noisy for this point (certainty.judge)."""
        auto = self.autocast.median_ms
        medians = self.plain.median_ms / auto if auto > 0 else None
        return judge(self.speedup, self.evidence, medians_ratio=medians)

    def _load(self) -> MachineLoad | None:
        return self.evidence.load if self.evidence is not None else None

    @property
    def flops(self) -> int:
        if self.config is not None:
            return family(self.config).flops(self.config)
        return linear_flops(self.widths, self.batch)

    @property
    def speedup(self) -> float:
        """The paired float32 ÷ autocast ratio (certainty.speedup_figure): above 1 means
        autocast was faster."""
        return speedup_figure(self.plain.median_ms, self.autocast.median_ms, self.evidence)

    @property
    def told_speedup(self) -> float:
        """The speedup a sentence may state from this point: NaN where its call is "can't
        tell" or "too noisy" (certainty.judge), so no verdict or crossover rests on it."""
        return self.speedup if self.call.graded else math.nan

    @property
    def gflops_plain(self) -> float:
        return self.plain.gflops(self.flops)

    @property
    def gflops_autocast(self) -> float:
        return self.autocast.gflops(self.flops)

    @property
    def bytes_plain(self) -> int:
        if self.config is not None:
            return family_bytes_moved(self.config, None)
        return bytes_moved(self.widths, self.batch, None)

    @property
    def bytes_autocast(self) -> int:
        if self.config is not None:
            return family_bytes_moved(self.config, self.dtype)
        return bytes_moved(self.widths, self.batch, self.dtype)

    @property
    def intensity_plain(self) -> float:
        return self.flops / self.bytes_plain

    @property
    def intensity_autocast(self) -> float:
        return self.flops / self.bytes_autocast

    def to_dict(self, grid: bool) -> dict[str, Any]:
        return dump(self.to_part(grid))

    def to_part(self, grid: bool) -> PointPart:
        return build(
            PointPart,
            index=self.index,
            value=self.value,
            **({"width": self.value2} if grid else {}),
            batch=self.batch,
            **({"widths": self.widths} if self.widths else {}),
            latency=build(
                PointLatency,
                plain=self.plain.to_part(),
                autocast=self.autocast.to_part(),
                speedup=nan_to_none(self.speedup),
                **(self.evidence.to_fields() if self.evidence is not None else {}),
                verdict=self.call.to_part(),
            ),
            gflops=build(PerModeRate, plain=self.gflops_plain, autocast=self.gflops_autocast),
            flops=self.flops,
            bytes=build(PerModeBytes, plain=self.bytes_plain, autocast=self.bytes_autocast),
            intensity=build(
                PerModeRate, plain=self.intensity_plain, autocast=self.intensity_autocast
            ),
            **({"routes": routes_to_parts(self.routes, self._load())} if self.routes else {}),
        )


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


def point_from_part(
    part: PointPart, i: int, grid: bool, dtype: str, config: ExperimentConfig | None
) -> SweepPoint:
    """One point; `config` is the point's planned config (None: an MLP file, widths say all)."""
    config = config or ExperimentConfig()
    widths = part.widths or ()
    if config.model == "mlp" and len(widths) < 2:
        problem = "missing" if part.widths is None else "needs at least 2 entries"
        raise DocumentFormatError(f"points[{i}].widths: {problem}")
    if grid and part.width is None:
        raise DocumentFormatError(f"points[{i}].width: missing")
    return SweepPoint(
        index=part.index,
        value=part.value,
        value2=part.width if grid else None,
        batch=part.batch,
        widths=widths,
        dtype=dtype,
        plain=LatencyStats.from_part(part.latency.plain),
        autocast=LatencyStats.from_part(part.latency.autocast),
        config=config if config.model != "mlp" else None,
        evidence=TimingEvidence.from_section(part.latency),
        routes=routes_from_parts(part.routes),
    )

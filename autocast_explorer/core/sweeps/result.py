"""A measured sweep and its JSON/CSV forms (schema `autocast-explorer/sweep/1`).

Document shape (names are a contract, like the result document's):

    schema, created, config (the base config), environment (incl. native_bf16),
    param: "batch" | "width" | "batch,width" (a grid: batch along a row, one row per width),
    values: [...], width_values: [...] (grid only),
    points: [{index, value, width (grid only), batch, widths,
              latency: {plain: {median_ms, p25_ms, p75_ms, …}, autocast: {…}, speedup},
              gflops: {plain, autocast}, flops, bytes: {plain, autocast},
              intensity: {plain, autocast}}],
    crossover: 1-D: null when the speedup never crosses 1.0, else the list of crossing values;
               grid: null when no row crosses, else [{width, values: null | [...]}] per row,
    crossover_sentence, verdict: {sentence, flags, onednn, …}, roofline: {peaks, points, …},
    warnings: [...]

Loading is strict (DocumentFormatError naming the first bad field); the crossover in a file must
match the one its points give.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from autocast_explorer.core.documents.field_types import (
    MultilineTexts,
    NullableNumber,
    Number,
    Numbers,
    Omittable,
    PositiveWhole,
    Text,
    refuse,
    schema_tag,
)
from autocast_explorer.core.documents.held import DerivingPart, derive, write_always
from autocast_explorer.core.documents.model import (
    OpenPart,
    Part,
    SchemaWhenMade,
    dump,
    part_schema,
    read,
    schema,
)
from autocast_explorer.core.documents.reader import (
    DocumentFormatError,
    clean_text,
    document_kind,
    finite_or_null,
    is_finite_number,
    load_document,
)
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.config_schema import config_schema
from autocast_explorer.core.experiment.result import ConfigField
from autocast_explorer.core.hardware.cpu import Environment
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.core.sweeps.crossover import (
    CrossingInterval,
    crossing_intervals,
    crossovers,
    format_value,
    interval_words,
)
from autocast_explorer.core.sweeps.crossover import (
    crossover_sentence as crossover_sentence,  # re-exported: imported from here
)
from autocast_explorer.core.sweeps.points import (
    SweepPoint as SweepPoint,  # re-exported: imported from here
)
from autocast_explorer.core.sweeps.points import (
    roofline_work as roofline_work,  # re-exported: imported from here
)
from autocast_explorer.core.sweeps.roofline import (
    Roofline,
    build_roofline_from_work,
    flops_formula,
)
from autocast_explorer.core.sweeps.spec import GRID, PlannedPoint, SweepSpec, sweep_params
from autocast_explorer.core.sweeps.verdict import HardwareVerdict

SCHEMA = "autocast-explorer/sweep/1"
CSV_FIELDS = (
    "index",
    "param",
    "value",
    "width",
    "batch",
    "widths",
    "plain_median_ms",
    "plain_p25_ms",
    "plain_p75_ms",
    "autocast_median_ms",
    "autocast_p25_ms",
    "autocast_p75_ms",
    "speedup",
    "plain_gflops",
    "autocast_gflops",
    "plain_intensity",
    "autocast_intensity",
    "speedup_low",
    "speedup_high",
)


# ---- the document, defined once: reading, writing and the published schema --------------------
def _param(value: Any) -> Any:
    if not isinstance(value, str):
        raise refuse("expected text")
    if value not in (*sweep_params(), GRID):
        raise refuse(f"expected one of batch, width, {GRID} (got {clean_text(value)[:40]!r})")
    return value


def _param_schema() -> dict[str, Any]:
    return {"enum": [*sweep_params(), GRID]}


def _values(value: Any) -> Any:
    """Swept values: a list of whole numbers ≥ 1 (order and repeats are the spec's to judge)."""
    if not isinstance(value, list | tuple) or not all(is_finite_number(v) for v in value):
        raise refuse("expected a list of numbers")
    if not all(float(v).is_integer() and v >= 1 for v in value):
        raise refuse("expected whole numbers ≥ 1")
    return tuple(int(v) for v in value)


_VALUES_SCHEMA = {
    "type": "array",
    "items": {"type": "integer", "minimum": 1},
    "minItems": 1,
    "uniqueItems": True,
}
SweptValues = Annotated[tuple[int, ...], BeforeValidator(_values), WithJsonSchema(_VALUES_SCHEMA)]
Param = Annotated[str, BeforeValidator(_param), SchemaWhenMade(_param_schema)]


class CrossoverRow(Part):
    """One width row of a grid's crossover: the batch values where its speedup crosses 1."""

    width: PositiveWhole
    values: Numbers | None


_CROSSOVER_SCHEMA = {
    "description": "null when the speedup never crosses 1.0; else the interpolated values (a "
    "grid: one entry per width)",
    "anyOf": [
        {"type": "null"},
        {"type": "array", "items": {"type": "number"}},
        {"type": "array", "items": part_schema(CrossoverRow)},
    ],
}
#: Checked against the points after reading (`_check_crossover`), with its own messages.
Crossover = Annotated[Any, WithJsonSchema(_CROSSOVER_SCHEMA)]


class CrossingBand(Part):
    """One crossing of `crossover_interval`: where the speedup crosses 1.0 and the band the
    points' intervals allow (crossover.CrossingInterval, written for readers)."""

    schema_name: ClassVar[str] = "crossing"

    value: Number
    low: Annotated[
        NullableNumber, Field(description="null: open to the start of the range swept")
    ] = None
    high: Annotated[
        NullableNumber, Field(description="null: open to the end of the range swept")
    ] = None


@dataclass(frozen=True)
class GridRow:
    """One width of a batch × width grid with the batch values where its speedup crosses 1."""

    width: int
    crossovers: tuple[float, ...]


def _crossing_bands(points: Sequence[SweepPoint]) -> list[CrossingInterval]:
    """Where the points that could tell (in value order) cross 1.0, each with the band their
    intervals allow: the crossings the sentence states. A point whose call is "can't tell" or
    "too noisy" says nothing of where a crossing is, so with none that could there is no band."""
    told = [p for p in points if p.call.graded]
    return crossing_intervals(
        [p.value for p in told],
        [p.speedup for p in told],
        [p.interval.low if p.interval else math.nan for p in told],
        [p.interval.high if p.interval else math.nan for p in told],
    )


class SweepResult(DerivingPart, OpenPart):
    """A whole sweep: base config, points in measuring order, verdict and roofline (float32 vs
    autocast over many batch sizes or hidden widths, or a batch × width grid).

    What follows from the points (the crossover and its sentence and bands, each point's work,
    the roofline's points) is derived again whether the program or a file gave it; a file's
    crossover must match its points, and its points the values swept (catches edited files).
    """

    #: The document kind: it leads refusals and names fallback files ("sweep-….json").
    KIND: ClassVar[str] = "sweep"
    schema_name: ClassVar[str] = "sweep"
    derived_keys: ClassVar[tuple[str, ...]] = ("crossover",)

    model_config = ConfigDict(
        json_schema_extra={
            "if": {"properties": {"param": {"const": GRID}}},
            "then": {
                "required": ["width_values"],
                "properties": {"points": {"items": {"required": ["width"]}}},
            },
        }
    )

    schema_: Annotated[str, schema_tag(SCHEMA), Field(alias="schema")]
    created: Text = ""
    config: ConfigField
    environment: Environment
    #: 'batch', 'width' or 'batch,width' (a grid: batch along a row, one row per width).
    param: Param
    #: The swept values (for a grid: the batch values along each row).
    values: SweptValues
    width_values: Omittable[SweptValues] = None
    points: tuple[SweepPoint, ...]
    #: 1-D: every value where the speedup crosses 1.0, None when it never does; a grid: one
    #: {width, values} per row, None when no row crosses.
    crossover: Crossover = None
    #: The crossover in words (1-D), or one clause per row (grid).
    crossover_sentence: Text = ""
    crossover_interval: tuple[CrossingBand, ...] | None = Field(
        default=None,
        description="1-D sweeps whose points have intervals: each crossing with where the "
        "points' 95% interval edges cross 1.0 (derived again from the points on reading)",
    )
    verdict: HardwareVerdict
    roofline: Roofline
    warnings: MultilineTexts = ()
    _spec: SweepSpec = PrivateAttr()

    @model_validator(mode="after")
    def _consistent(self) -> SweepResult:
        self.require_in_files()
        self._spec = self._swept()
        try:
            plan = self._spec.plan(self.config)
        except ConfigError as exc:
            raise refuse(str(exc), at="values") from None
        derive(self, points=self._placed(plan))
        derive(self, roofline=self._roofline_again())
        found = self._crossover_json()
        if "crossover" in self.model_fields_set:
            self._check_stored_crossover(found)
        derive(self, crossover=found, crossover_sentence=self._sentence())
        self._crossover_interval_field()
        write_always(self, "created", "warnings")
        return self

    def _swept(self) -> SweepSpec:
        """The spec the values describe (refused: unordered or repeated values)."""
        grid = self.param == GRID
        if grid and self.width_values is None:
            raise refuse("missing", at="width_values")
        width_values = self.width_values or () if grid else ()
        try:
            spec = SweepSpec("batch" if grid else self.param, self.values, width_values)
        except ConfigError as exc:
            raise refuse(exc.rule, at="values") from None
        if spec.values != self.values or spec.width_values != width_values:
            raise refuse("must be increasing, without repeats", at="values")
        return spec

    def _placed(self, plan: list[PlannedPoint]) -> tuple[SweepPoint, ...]:
        """Each point with its planned config and the sweep's dtype; one per planned value."""
        grid, dtype = self.is_grid, self.config.dtype
        configs = [p.config for p in plan] + [None] * max(0, len(self.points) - len(plan))
        placed = []
        for i, (point, planned_config) in enumerate(zip(self.points, configs, strict=False)):
            config = planned_config or ExperimentConfig()
            if config.model == "mlp" and len(point.widths) < 2:
                given = "widths" in point.model_fields_set
                raise refuse(
                    "needs at least 2 entries" if given else "missing", at=f"points[{i}].widths"
                )
            if grid and point.value2 is None:
                raise refuse("missing", at=f"points[{i}].width")
            if not grid and point.value2 is not None:
                point = point.model_copy(update={"value2": None})
            placed.append(point.in_sweep(dtype, config if config.model != "mlp" else None))
        planned = [(p.index, p.value, p.value2) for p in plan]
        if [(p.index, p.value, p.value2) for p in placed] != planned:
            raise refuse("do not match values (one point per value, in order)", at="points")
        return tuple(placed)

    def _roofline_again(self) -> Roofline:
        """The roofline of the points under the peaks estimated when they were measured."""
        return build_roofline_from_work(
            self.config.dtype,
            self.environment.threads,
            roofline_work(self.points),
            flops_formula=flops_formula(self.config),
            peaks=tuple(self.roofline.peaks.values()),
        )

    def _crossover_interval_field(self) -> None:
        """`crossover_interval` (1-D with intervals only): [{value, low, high}] or null."""
        if self.is_grid or not any(p.interval is not None for p in self.points):
            derive(self, crossover_interval=None)
            self.model_fields_set.discard("crossover_interval")
            return
        found = tuple(
            CrossingBand(value=c.value, low=c.low, high=c.high) for c in self.crossover_intervals
        )
        derive(self, crossover_interval=found or None)

    # ---- what the charts draw -------------------------------------------------------------
    @property
    def spec(self) -> SweepSpec:
        return self._spec

    @property
    def is_grid(self) -> bool:
        return self.param == GRID

    @property
    def speedups(self) -> tuple[float, ...]:
        """1-D: one speedup per point, in the order of `values`."""
        return tuple(p.speedup for p in self.points)

    def row(self, width: int) -> tuple[SweepPoint, ...]:
        """Grid: the points of one width, in batch order."""
        return tuple(p for p in self.points if p.value2 == width)

    @property
    def grid_rows(self) -> tuple[GridRow, ...]:
        """Grid: for each width, the batch values where autocast's speedup crosses 1.0."""
        rows = []
        for width in self.spec.width_values:
            pts = self.row(width)
            told = [p.told_speedup for p in pts]
            found = crossovers([p.value for p in pts], told) if pts else []
            rows.append(GridRow(width, tuple(found)))
        return tuple(rows)

    def speedup_matrix(self) -> list[list[float]]:
        """Grid: speedup[row = width index][column = batch index], NaN where not measured."""
        matrix = [[math.nan] * len(self.spec.values) for _ in self.spec.width_values]
        col = {v: i for i, v in enumerate(self.spec.values)}
        row = {w: i for i, w in enumerate(self.spec.width_values)}
        for p in self.points:
            if p.value2 is not None:
                matrix[row[p.value2]][col[p.value]] = p.speedup
        return matrix

    def _sentence(self) -> str:
        if self.is_grid:
            parts = []
            for r in self.grid_rows:
                where = ", ".join(format_value(v) for v in r.crossovers) or "never"
                if not any(p.call.graded for p in self.row(r.width)):
                    where = "can't tell"
                bands = [interval_words(c, "batch") for c in self.row_crossover_intervals(r.width)]
                band = f" (by the 95% intervals: {'; '.join(bands)})" if bands else ""
                parts.append(f"width {r.width}: {where}{band}")
            return "Speedup crosses 1.0 at batch — " + "; ".join(parts) + "."
        told = [p.told_speedup for p in self.points]
        sentence = crossover_sentence(self.spec.param, self.values, told)
        if any(p.interval is not None for p in self.points):
            bands = [interval_words(c, self.spec.param) for c in self.crossover_intervals]
            if bands:
                sentence += f" By the points' 95% intervals: {'; '.join(bands)}."
        return sentence

    def row_crossover_intervals(self, width: int) -> list[CrossingInterval]:
        """Grid: one row's crossings with their bands ([] when its points have no interval)."""
        pts = self.row(width)
        return _crossing_bands(pts) if any(p.interval is not None for p in pts) else []

    @property
    def crossover_intervals(self) -> list[CrossingInterval]:
        """1-D: each crossing with the band the points' intervals allow ([] for a grid)."""
        if self.is_grid or not self.points:
            return []
        return _crossing_bands(self.points)

    def _crossover_json(self) -> Any:
        """Only the points whose call could tell count (SweepPoint.told_speedup)."""
        if not self.is_grid:
            found = crossovers(self.values, [p.told_speedup for p in self.points])
            return tuple(found) if found else None
        rows = self.grid_rows
        if not any(r.crossovers for r in rows):
            return None
        return tuple({"width": r.width, "values": r.crossovers or None} for r in rows)

    # ---- JSON ---------------------------------------------------------------------------
    @property
    def extras(self) -> dict[str, Any]:
        """Top-level sections other tools added (kept as they were read, written back)."""
        return dict(self.model_extra or {})

    def _legacy_crossover_json(self) -> Any:
        """What files written before points that cannot tell were left out stored: the
        crossings of every point's speedup."""
        if not self.is_grid:
            found = crossovers(self.values, self.speedups)
            return tuple(found) if found else None
        rows = [
            (w, tuple(crossovers([p.value for p in pts], [p.speedup for p in pts])))
            for w in self.spec.width_values
            for pts in [self.row(w)]
        ]
        if not any(found for _w, found in rows):
            return None
        return tuple({"width": w, "values": found or None} for w, found in rows)

    def _check_stored_crossover(self, found: Any) -> None:
        """A file's crossover must be what its points give (catches edited files): today's
        rule, or for a file written before it, the crossings of every point."""
        try:
            _check_crossover(self.crossover, found, self.is_grid)
        except PydanticCustomError:
            legacy = self._legacy_crossover_json()
            if legacy == found:
                raise
            _check_crossover(self.crossover, legacy, self.is_grid)

    def to_dict(self) -> dict[str, Any]:
        return dump(self)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(finite_or_null(self.to_dict()), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Any) -> SweepResult:
        """Strict: raises DocumentFormatError naming `sweep` and the first bad field."""
        return read(cls, data, cls.KIND)

    @classmethod
    def from_json(cls, text: str | bytes) -> SweepResult:
        with document_kind(cls.KIND):
            return cls.from_dict(load_document(text))

    # ---- CSV ----------------------------------------------------------------------------
    def to_csv(self) -> str:
        """One row per point (a spreadsheet's view of the sweep)."""
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n")
        writer.writeheader()
        for p in self.points:
            writer.writerow(
                {
                    "index": p.index,
                    "param": self.param,
                    "value": p.value,
                    "width": p.value2 if p.value2 is not None else "",
                    "batch": p.batch,
                    "widths": " ".join(map(str, p.widths)),
                    "plain_median_ms": f"{p.plain.median_ms:.6f}",
                    "plain_p25_ms": f"{p.plain.p25_ms:.6f}",
                    "plain_p75_ms": f"{p.plain.p75_ms:.6f}",
                    "autocast_median_ms": f"{p.autocast.median_ms:.6f}",
                    "autocast_p25_ms": f"{p.autocast.p25_ms:.6f}",
                    "autocast_p75_ms": f"{p.autocast.p75_ms:.6f}",
                    "speedup": f"{p.speedup:.4f}",
                    "plain_gflops": f"{p.gflops_plain:.3f}",
                    "autocast_gflops": f"{p.gflops_autocast:.3f}",
                    "plain_intensity": f"{p.intensity_plain:.4f}",
                    "autocast_intensity": f"{p.intensity_autocast:.4f}",
                    "speedup_low": f"{p.interval.low:.4f}" if p.interval else "",
                    "speedup_high": f"{p.interval.high:.4f}" if p.interval else "",
                }
            )
        return buffer.getvalue()


def sweep_schema() -> dict[str, Any]:
    """The published schema of the sweep document (tools/write_schemas.py writes it)."""
    return schema(
        SweepResult,
        SCHEMA,
        "Autocast Explorer sweep",
        "float32 vs autocast over many batch sizes or hidden widths (or a batch × width grid): "
        "written by `autocast-explorer sweep --json` and the window's Sweeps tab. `values` are "
        "increasing; `points` hold one point per value (per width row in a grid), in order.",
        defs={"config": config_schema(closed=False)},
    )


def _check_crossover(stored: Any, expected: Any, grid: bool) -> None:
    """A file's crossover must be what its points give (catches edited files)."""
    if (stored is None) != (expected is None):
        raise refuse("does not match the points", at="crossover")
    if stored is None:
        return
    if not grid:
        if not isinstance(stored, list) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in stored
        ):
            raise refuse("expected null or a list of numbers", at="crossover")
        if not _close(stored, expected):
            raise refuse("does not match the points", at="crossover")
        return
    if not isinstance(stored, list) or len(stored) != len(expected):
        raise refuse("expected one entry per width", at="crossover")
    for i, (got, want) in enumerate(zip(stored, expected, strict=True)):
        try:
            row = read(CrossoverRow, got, at=f"crossover[{i}]")
        except DocumentFormatError as exc:
            at, _, problem = exc.detail.partition(": ")
            raise refuse(problem, at=at) from None
        if row.width != want["width"]:
            raise refuse("does not match width_values", at=f"crossover[{i}].width")
        values, wanted = row.values, want["values"]
        if (values is None) != (wanted is None) or (
            values is not None and wanted is not None and not _close(values, wanted)
        ):
            raise refuse("does not match the points", at=f"crossover[{i}].values")


def _close(got: Sequence[float], want: Sequence[float]) -> bool:
    return len(got) == len(want) and all(
        math.isclose(a, b, rel_tol=1e-6) for a, b in zip(got, want, strict=True)
    )

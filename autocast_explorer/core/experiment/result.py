"""The result of one experiment and its JSON/CSV forms (schema `autocast-explorer/result/1`).

The JSON names are a contract with presenters and testers (docs/file-formats.md). Loading
is strict: a foreign, truncated or corrupt document raises ResultFormatError with the path of
the first bad field, and nothing in a file is ever executed.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, ConfigDict, Field, create_model, model_validator

from autocast_explorer.core.data.answers import AccuracyPart, AccuracyReport
from autocast_explorer.core.data.records import DataInfo, DataPart
from autocast_explorer.core.documents.field_types import (
    FlagMap,
    MultilineTexts,
    NullableNumber,
    NullableText,
    Omittable,
    Text,
    Whole,
    Wholes,
    refuse,
    schema_tag,
    text_rules,
)
from autocast_explorer.core.documents.model import (
    OpenPart,
    Part,
    build,
    def_ref,
    dump,
    read,
    schema,
)
from autocast_explorer.core.documents.reader import (
    MAX_SHOWN_CHARS,
    DocumentFormatError,
    clean_text,
    document_kind,
    finite_or_null,
    load_document,
)
from autocast_explorer.core.experiment.agreement import Agreement, AgreementPart
from autocast_explorer.core.experiment.capture import LayerDtypes, LayerDtypesPart, LayerRecord
from autocast_explorer.core.experiment.certainty import (
    EvidenceSection,
    SpeedCall,
    TimingEvidence,
    judge,
    speedup_figure,
)
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.config_schema import config_schema
from autocast_explorer.core.experiment.families import family
from autocast_explorer.core.experiment.families.user.info import ModelInfo, ModelInfoPart
from autocast_explorer.core.experiment.guards import ForwardEstimate, GuardPart
from autocast_explorer.core.experiment.routes import (
    RoutePart,
    RouteResult,
    routes_from_parts,
    routes_to_parts,
)
from autocast_explorer.core.experiment.timing import LatencyPart, LatencyStats
from autocast_explorer.core.experiment.train_report import TrainPart, TrainReport
from autocast_explorer.core.hardware.cpu import Environment, EnvironmentPart
from autocast_explorer.core.hardware.load import MachineLoad
from autocast_explorer.core.numerics.layer_error import LayerError, LayerErrorPart
from autocast_explorer.core.numerics.optrace import (
    CastsByGradMode,
    CastSummaryPart,
    OpsDiffSection,
    OpsSection,
    OpTrace,
)
from autocast_explorer.core.runtime.errors import ConfigError

SCHEMA = "autocast-explorer/result/1"
CSV_FIELDS = (
    "mode",
    "dtype",
    "median_ms",
    "p25_ms",
    "p75_ms",
    "iqr_ms",
    "samples",
    "block_size",
    "cold_ms",
    "gflops",
    "speedup",
    "speedup_low",
    "speedup_high",
)


#: The name result readers have always caught; the same class as every document's error.
ResultFormatError = DocumentFormatError


# ---- the document, defined once: reading, writing and the published schema --------------------
def _config(value: Any) -> Any:
    if not isinstance(value, dict):
        raise refuse("expected a JSON object")
    try:
        config = ExperimentConfig.from_dict(value)
    except (ConfigError, TypeError) as exc:
        raise refuse(clean_text(str(exc))) from None
    # A measurement names its model: a default filled in would show a model never measured.
    if not config.is_user_model and config.model != "mlp":
        for param in family(config).params:
            if param.name not in value:
                raise refuse(f"{param.name}: missing (a {config.model} result names it)")
    return config


#: The `config` object: read (and its schema made) by ExperimentConfig itself (config_schema.py).
ConfigField = Annotated[Any, BeforeValidator(_config), def_ref("config")]


class LatencySection(EvidenceSection):
    """Both modes' latency, the speedup, and (since intervals) the paired timing's evidence."""

    plain: LatencyPart
    autocast: LatencyPart | None = Field(
        description="null when the autocast forward raised (autocast_error)"
    )
    speedup: Annotated[
        NullableNumber,
        Field(
            description="the paired float32 ÷ autocast ratio (speedup_interval.estimate); "
            "plain median ÷ autocast median without one"
        ),
    ] = None


class OutputDtypes(Part):
    plain: Text
    autocast: NullableText


class LayerPart(Part):
    name: Text
    kind: Text
    out_shape: Wholes = ()
    plain: LayerDtypesPart
    autocast: LayerDtypesPart | None = Field(
        description="null: the autocast forward raised before this layer"
    )
    error: LayerErrorPart | None = None


class ResultPart(OpenPart):
    """One config measured in float32 and under torch.autocast('cpu')."""

    model_config = ConfigDict(json_schema_extra={"dependentRequired": {"ops": ["casts"]}})

    schema_: Annotated[str, schema_tag(SCHEMA)] = Field(alias="schema")
    created: Annotated[Text, Field(description="ISO 8601 UTC time")] = ""
    config: ConfigField
    environment: EnvironmentPart
    latency: LatencySection
    flops_per_forward: Annotated[
        Whole,
        Field(
            description="2 per multiply-add of the model's matrix products "
            "(Linear layers for an MLP)"
        ),
    ]
    output_dtype: OutputDtypes
    layers: tuple[LayerPart, ...]
    agreement: AgreementPart | None = Field(description="null when the autocast forward raised")
    warnings: MultilineTexts = ()
    autocast_error: Annotated[
        str,
        *text_rules(multiline=True, limit=MAX_SHOWN_CHARS),
        Field(
            description="only when the autocast forward raised: torch's message (float32 alone "
            "was timed)"
        ),
    ] = ""
    fast_path: Annotated[
        Omittable[FlagMap],
        Field(description="transformer: whether the fused encoder kernel ran, per mode"),
    ] = None
    ops: OpsSection | None = None
    casts: CastSummaryPart | None = None
    ops_diff: OpsDiffSection = ()
    casts_by_grad_mode: CastsByGradMode = Field(default_factory=dict)
    guard: GuardPart | None = Field(
        default=None, description="the time guard's estimate, beside the measurement"
    )
    train: TrainPart | None = None
    data: DataPart | None = None
    accuracy: AccuracyPart | None = None
    model_info: ModelInfoPart | None = Field(
        default=None, description="your own model (--model SPEC): what ran"
    )
    routes: tuple[RoutePart, ...] | None = Field(
        default=None,
        description="run --routes: each route float32 vs lower, compared with eager float32",
    )

    @model_validator(mode="after")
    def _measured_unless_failed(self) -> ResultPart:
        """Autocast's side may be null only when the autocast forward raised (autocast_error)."""
        if self.ops is not None and self.casts is None:
            raise refuse("missing", at="casts")
        if self.autocast_error:
            return self
        if self.latency.autocast is None:
            raise refuse("expected a JSON object", at="latency.autocast")
        if self.output_dtype.autocast is None:
            raise refuse("expected text", at="output_dtype.autocast")
        if self.agreement is None:
            raise refuse("expected a JSON object", at="agreement")
        for i, layer in enumerate(self.layers):
            if layer.autocast is None:
                raise refuse("expected a JSON object", at=f"layers[{i}].autocast")
        return self


def result_schema(sections: dict[str, type[Part]] | None = None) -> dict[str, Any]:
    """The published schema of the result document (tools/write_schemas.py writes it).

    `sections`: optional top-level objects that layers above the result add to it (`run
    --placements` writes `placements`); each is described by its own part.
    """
    # Type forms made at run time (`part | None`) are values to a type checker.
    fields: dict[str, Any] = {key: (part | None, None) for key, part in (sections or {}).items()}
    extended = create_model("ResultPart", __base__=ResultPart, **fields)
    return schema(
        extended,
        SCHEMA,
        "Autocast Explorer result",
        "One config measured in float32 and under torch.autocast('cpu'): written by "
        "`autocast-explorer run --json`, the window's File › Save and experimentFinished. "
        "Readers ignore keys they do not know.",
        defs={"config": config_schema(closed=False)},
    )


@dataclass(frozen=True)
class ExperimentResult:
    """Everything measured for one config: latency, dtypes per layer, agreement, environment."""

    #: The document kind: it leads refusals and names fallback files ("result-….json").
    KIND: ClassVar[str] = "result"

    config: ExperimentConfig
    environment: Environment
    plain: LatencyStats
    autocast: LatencyStats | None  # None when the autocast forward raised (autocast_error)
    output_dtype_plain: str
    output_dtype_autocast: str  # "" when the autocast forward raised
    layers: tuple[LayerRecord, ...]
    agreement: Agreement | None  # None when the autocast forward raised
    flops: int
    warnings: tuple[str, ...] = ()
    created: str = ""
    extras: dict[str, Any] = field(default_factory=dict, compare=False)
    op_trace: OpTrace | None = None  # aten ops and casts of one forward per mode (optrace.py)
    autocast_error: str = ""  # the message when the autocast forward raised: a finding
    fast_path: dict[str, bool] | None = None  # transformer: did the fused kernel run, per mode
    guard: ForwardEstimate | None = None  # the time guard's forecast, beside the measurement
    train: TrainReport | None = None  # training mode: losses, dtypes, saved bytes (train_report.py)
    #: The speedup's interval, stalled blocks and the machine's load (None: saved before them).
    evidence: TimingEvidence | None = None
    data: DataInfo | None = None  # real data: what the model was fitted to (core/data/)
    accuracy: AccuracyReport | None = None  # real data: held-out answers both ways
    model_info: ModelInfo | None = None  # a user model: its class, size, file hash, input
    routes: tuple[RouteResult, ...] = ()  # config.routes beyond eager: every route (routes.py)

    @property
    def slower_ms(self) -> float:
        """The slower mode's median: what the time guard's estimate forecast."""
        auto = self.autocast.median_ms if self.autocast is not None else 0.0
        return max(self.plain.median_ms, auto)

    @property
    def speedup(self) -> float:
        """The paired float32 ÷ autocast ratio (certainty.speedup_figure): above 1 means
        autocast was faster (NaN: not timed)."""
        auto = self.autocast.median_ms if self.autocast is not None else None
        return speedup_figure(self.plain.median_ms, auto, self.evidence)

    @property
    def speed_call(self) -> SpeedCall:
        """What the speedup supports: faster, slower, same, can't tell or too noisy to tell."""
        iqrs = tuple(
            s.iqr_ms / s.median_ms for s in (self.plain, self.autocast) if s and s.median_ms > 0
        )
        auto = self.autocast.median_ms if self.autocast is not None else math.nan
        medians = self.plain.median_ms / auto if auto > 0 else math.nan
        return judge(self.speedup, self.evidence, self.environment.threads, iqrs, medians)

    @property
    def run_load(self) -> MachineLoad | None:
        """The machine's load during the timing (None: not read, or an older file): a route's
        call is made under it (RouteResult.call_under)."""
        return self.evidence.load if self.evidence is not None else None

    def route_call(self, route: RouteResult) -> SpeedCall:
        """A route's call under this run's load and threads: the same rules as the run's own
        (eager's route then says what the headline says)."""
        return route.call_under(self.run_load, self.environment.threads)

    def gflops(self, mode: str) -> float:
        stats = self._stats(mode)
        return float("nan") if stats is None else stats.gflops(self.flops)

    def _stats(self, mode: str) -> LatencyStats | None:
        return {"plain": self.plain, "autocast": self.autocast}[mode]

    @property
    def autocast_failed(self) -> bool:
        """True when the autocast forward raised: only float32 was measured."""
        return bool(self.autocast_error)

    # ---- JSON (one definition: ResultPart) ----------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        data = dump(self.to_part())
        data.update(self.extras)
        return data

    def to_part(self) -> ResultPart:
        optional: dict[str, Any] = {}
        if self.autocast_error:
            optional["autocast_error"] = self.autocast_error
        if self.fast_path is not None:
            optional["fast_path"] = dict(self.fast_path)
        if self.op_trace is not None:
            optional.update(self.op_trace.sections())
        if self.guard is not None:
            optional["guard"] = self.guard.to_part()
        if self.train is not None:
            optional["train"] = self.train.to_part()
        if self.data is not None:
            optional["data"] = self.data.to_part()
        if self.accuracy is not None:
            optional["accuracy"] = self.accuracy.to_part()
        if self.model_info is not None:
            optional["model_info"] = self.model_info.to_part()
        if self.routes:
            optional["routes"] = routes_to_parts(
                self.routes, self.run_load, self.environment.threads
            )
        autocast = self.autocast
        return build(
            ResultPart,
            schema=SCHEMA,
            created=self.created,
            config=self.config.to_dict(),
            environment=self.environment.to_part(),
            latency=build(
                LatencySection,
                plain=self.plain.to_part(self.flops),
                autocast=None if autocast is None else autocast.to_part(self.flops),
                speedup=self.speedup,
                **(self.evidence.to_fields() if self.evidence is not None else {}),
                verdict=self.speed_call.to_part(),
            ),
            flops_per_forward=self.flops,
            output_dtype=build(
                OutputDtypes,
                plain=self.output_dtype_plain,
                autocast=self.output_dtype_autocast or None,
            ),
            layers=tuple(
                build(
                    LayerPart,
                    name=layer.name,
                    kind=layer.kind,
                    out_shape=layer.out_shape,
                    plain=layer.plain.to_part(),
                    autocast=layer.autocast.to_part() if layer.autocast else None,
                    **({"error": layer.error.to_part()} if layer.error else {}),
                )
                for layer in self.layers
            ),
            agreement=None if self.agreement is None else self.agreement.to_part(),
            warnings=self.warnings,
            **optional,
        )

    def to_json(self, indent: int | None = 2) -> str:
        """Strict JSON: a value that is not finite (float16 overflow → NaN) is written null."""
        return json.dumps(finite_or_null(self.to_dict()), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Any) -> ExperimentResult:
        """Strict: DocumentFormatError naming `result` and the first bad field."""
        return cls.from_part(read(ResultPart, data, cls.KIND))

    @classmethod
    def from_part(cls, part: ResultPart) -> ExperimentResult:
        failed = bool(part.autocast_error)
        layers = tuple(
            LayerRecord(
                name=layer.name,
                kind=layer.kind,
                plain=_dtypes(layer.plain),
                autocast=None if layer.autocast is None else _dtypes(layer.autocast),
                out_shape=layer.out_shape,
                error=None if layer.error is None else LayerError.from_part(layer.error),
            )
            for layer in part.layers
        )
        latency, agreement = part.latency, part.agreement
        return cls(
            config=part.config,
            environment=Environment.from_part(part.environment),
            plain=LatencyStats.from_part(latency.plain),
            autocast=(
                None
                if failed or latency.autocast is None
                else LatencyStats.from_part(latency.autocast)
            ),
            output_dtype_plain=part.output_dtype.plain,
            output_dtype_autocast="" if failed else part.output_dtype.autocast or "",
            layers=layers,
            agreement=None if failed or agreement is None else Agreement.from_part(agreement),
            flops=part.flops_per_forward,
            warnings=part.warnings,
            created=part.created,
            extras=dict(part.model_extra or {}),
            op_trace=None if part.ops is None else OpTrace.from_part(part),
            guard=None if part.guard is None else ForwardEstimate.from_part(part.guard),
            autocast_error=part.autocast_error,
            fast_path=part.fast_path,
            train=None if part.train is None else TrainReport.from_part(part.train),
            evidence=None if failed else TimingEvidence.from_section(latency),
            data=None if part.data is None else DataInfo.from_part(part.data),
            accuracy=None if part.accuracy is None else AccuracyReport.from_part(part.accuracy),
            model_info=None if part.model_info is None else ModelInfo.from_part(part.model_info),
            routes=routes_from_parts(part.routes),
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> ExperimentResult:
        with document_kind(cls.KIND):
            return cls.from_dict(load_document(text))

    # ---- CSV ----------------------------------------------------------------------------
    def csv_rows(self) -> list[dict[str, Any]]:
        """One row per mode with the latency statistics (the table a spreadsheet wants)."""
        rows = []
        for mode, stats, dtype in (
            ("plain", self.plain, "float32"),
            ("autocast", self.autocast, self.config.dtype),
        ):
            if stats is None:
                continue  # the autocast forward raised: nothing was timed
            rows.append(
                {
                    "mode": mode,
                    "dtype": dtype,
                    "median_ms": f"{stats.median_ms:.6f}",
                    "p25_ms": f"{stats.p25_ms:.6f}",
                    "p75_ms": f"{stats.p75_ms:.6f}",
                    "iqr_ms": f"{stats.iqr_ms:.6f}",
                    "samples": stats.samples,
                    "block_size": stats.block_size,
                    "cold_ms": f"{stats.cold_ms:.6f}",
                    "gflops": f"{stats.gflops(self.flops):.3f}",
                    "speedup": f"{self.speedup:.4f}" if mode == "autocast" else "1.0000",
                    **_interval_cells(self.evidence if mode == "autocast" else None),
                }
            )
        return rows

    def to_csv(self) -> str:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(self.csv_rows())
        return buffer.getvalue()


def _interval_cells(evidence: TimingEvidence | None) -> dict[str, str]:
    """speedup_low / speedup_high for a CSV row ('' where no interval was measured)."""
    interval = evidence.interval if evidence is not None else None
    if interval is None:
        return {"speedup_low": "", "speedup_high": ""}
    return {"speedup_low": f"{interval.low:.4f}", "speedup_high": f"{interval.high:.4f}"}


def _dtypes(part: LayerDtypesPart) -> LayerDtypes:
    return LayerDtypes.from_part(part)

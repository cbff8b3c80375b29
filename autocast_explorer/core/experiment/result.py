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
from typing import Annotated, Any, ClassVar

from pydantic import (
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    SerializerFunctionWrapHandler,
    create_model,
    field_serializer,
    model_validator,
)

from autocast_explorer.core.data.answers import AccuracyReport
from autocast_explorer.core.data.records import DataInfo
from autocast_explorer.core.documents.field_types import (
    FlagMap,
    Measured,
    MultilineTexts,
    NullableText,
    Omittable,
    Text,
    Whole,
    refuse,
    schema_tag,
    text_rules,
)
from autocast_explorer.core.documents.held import EmptyWhenNull, derive, leave_out_empty
from autocast_explorer.core.documents.model import (
    OpenPart,
    Part,
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
from autocast_explorer.core.experiment.agreement import Agreement
from autocast_explorer.core.experiment.capture import LayerRecord
from autocast_explorer.core.experiment.certainty import (
    SpeedCall,
    TimingEvidence,
    judge,
    speedup_figure,
)
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.config_schema import config_schema
from autocast_explorer.core.experiment.families import family
from autocast_explorer.core.experiment.families.user.info import ModelInfo
from autocast_explorer.core.experiment.guards import ForwardEstimate
from autocast_explorer.core.experiment.input_record import InputRecord
from autocast_explorer.core.experiment.routes import RouteResult, routes_under
from autocast_explorer.core.experiment.timing import LatencyStats
from autocast_explorer.core.experiment.train_report import TrainReport
from autocast_explorer.core.hardware.cpu import Environment
from autocast_explorer.core.hardware.load import MachineLoad
from autocast_explorer.core.numerics.optrace import (
    CastsByGradMode,
    CastSummary,
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


# ---- the document, defined once: the program's result, reading, writing, the schema -----------
def _config(value: Any) -> Any:
    if isinstance(value, ExperimentConfig):
        return value  # the program's own
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
ConfigField = Annotated[
    ExperimentConfig,
    PlainValidator(_config),
    PlainSerializer(lambda config: config.to_dict()),
    def_ref("config"),
]


class LatencySection(TimingEvidence):
    """Both modes' latency, the speedup (derived from them and the interval), and (since
    intervals) the paired timing's evidence."""

    plain: LatencyStats
    autocast: LatencyStats | None = Field(
        description="null when the autocast forward raised (autocast_error)"
    )
    speedup: Measured = Field(
        default=None,
        validate_default=True,
        description="the paired float32 ÷ autocast ratio (speedup_interval.estimate); "
        "plain median ÷ autocast median without one",
    )

    @model_validator(mode="after")
    def _speedup_of_modes(self) -> LatencySection:
        auto = self.autocast.median_ms if self.autocast is not None else None
        evidence = TimingEvidence.from_section(self)
        derive(self, speedup=speedup_figure(self.plain.median_ms, auto, evidence))
        return self

    @classmethod
    def of(
        cls,
        plain: LatencyStats,
        autocast: LatencyStats | None,
        evidence: TimingEvidence | None,
    ) -> LatencySection:
        """Both modes' statistics with the evidence of their paired timing (None: none)."""
        fields = evidence.to_fields() if evidence is not None else {}
        return cls(plain=plain, autocast=autocast, **fields)


class OutputDtypes(Part):
    plain: Text
    autocast: NullableText


class ExperimentResult(OpenPart):
    """Everything measured for one config: latency, dtypes per layer, agreement, environment
    (one config measured in float32 and under torch.autocast('cpu')).

    The program reads the measurement through properties named as it thinks of them (`plain`,
    `autocast`, `evidence`, `flops`, `op_trace`…); the fields are the document's keys. Keys
    of other tools' sections (placements) ride along in `extras`.
    """

    #: The document kind: it leads refusals and names fallback files ("result-….json").
    KIND: ClassVar[str] = "result"
    schema_name: ClassVar[str] = "result"

    model_config = ConfigDict(json_schema_extra={"dependentRequired": {"ops": ["casts"]}})

    schema_: Annotated[str, schema_tag(SCHEMA), Field(alias="schema")]
    created: Annotated[Text, Field(description="ISO 8601 UTC time")] = ""
    config: ConfigField
    environment: Environment
    latency: LatencySection
    flops_per_forward: Annotated[
        Whole,
        Field(
            description="2 per multiply-add of the model's matrix products "
            "(Linear layers for an MLP)"
        ),
    ]
    output_dtype: OutputDtypes
    layers: tuple[LayerRecord, ...]
    agreement: Agreement | None = Field(description="null when the autocast forward raised")
    warnings: MultilineTexts = ()
    #: The message when the autocast forward raised: a finding ('' when it did not).
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
    casts: CastSummary | None = None
    ops_diff: OpsDiffSection = ()
    casts_by_grad_mode: CastsByGradMode = Field(default_factory=dict)
    guard: ForwardEstimate | None = Field(
        default=None, description="the time guard's estimate, beside the measurement"
    )
    train: TrainReport | None = None
    data: DataInfo | None = None
    accuracy: AccuracyReport | None = None
    model_info: ModelInfo | None = Field(
        default=None, description="your own model (--model SPEC): what ran"
    )
    input: InputRecord | None = Field(
        default=None, description="what the model was fed (older files lack it)"
    )
    #: config.routes beyond eager: every route (routes.py); () when only eager ran.
    routes: Annotated[tuple[RouteResult, ...], EmptyWhenNull()] = Field(
        default=None,
        validate_default=True,
        description="run --routes: each route float32 vs lower, compared with eager float32",
    )

    @model_validator(mode="after")
    def _measured_unless_failed(self) -> ExperimentResult:
        """Autocast's side may be null only when the autocast forward raised (autocast_error);
        when it did, nothing of it is kept."""
        if self.ops is not None and self.casts is None:
            raise refuse("missing", at="casts")
        if self.autocast_error:
            self._without_autocast()
        else:
            self._autocast_measured()
        leave_out_empty(self, "autocast_error", *_SOMETIMES)
        return self

    @field_serializer("latency", mode="wrap")
    def _rates_written(
        self, latency: LatencySection, write: SerializerFunctionWrapHandler
    ) -> dict[str, Any]:
        """Each mode's GFLOP/s at this result's FLOPs, written beside its statistics, and the
        run's speed verdict (written, never read back: readers call again)."""
        flops, auto = self.flops_per_forward, latency.autocast
        rates: dict[str, Any] = {"plain": latency.plain.with_gflops(flops)}
        if auto is not None:
            rates["autocast"] = auto.with_gflops(flops)
        rates["verdict"] = self.speed_call.verdict()
        written: dict[str, Any] = write(latency.model_copy(update=rates))
        return written

    @field_serializer("routes", mode="wrap")
    def _routes_written(
        self, routes: tuple[RouteResult, ...], write: SerializerFunctionWrapHandler
    ) -> Any:
        """Each route with its verdict under this run's load and threads."""
        return write(routes_under(routes, self.run_load, self.environment.threads))

    def _autocast_measured(self) -> None:
        if self.latency.autocast is None:
            raise refuse("expected a JSON object", at="latency.autocast")
        if self.output_dtype.autocast is None:
            raise refuse("expected text", at="output_dtype.autocast")
        if self.agreement is None:
            raise refuse("expected a JSON object", at="agreement")
        for i, layer in enumerate(self.layers):
            if layer.autocast is None:
                raise refuse("expected a JSON object", at=f"layers[{i}].autocast")

    def _without_autocast(self) -> None:
        latency = self.latency.model_copy(update={"autocast": None, "speedup": math.nan})
        output_dtype = self.output_dtype.model_copy(update={"autocast": None})
        derive(self, latency=latency, output_dtype=output_dtype, agreement=None)

    # ---- the measurement, as the program reads it ---------------------------------------
    @property
    def plain(self) -> LatencyStats:
        return self.latency.plain

    @property
    def autocast(self) -> LatencyStats | None:
        """None when the autocast forward raised (autocast_error)."""
        return self.latency.autocast

    @property
    def output_dtype_plain(self) -> str:
        return self.output_dtype.plain

    @property
    def output_dtype_autocast(self) -> str:
        """'' when the autocast forward raised."""
        return self.output_dtype.autocast or ""

    @property
    def flops(self) -> int:
        return self.flops_per_forward

    @property
    def evidence(self) -> TimingEvidence | None:
        """The speedup's interval, stalled blocks and the machine's load (None: saved before
        them, or the autocast forward raised)."""
        return None if self.autocast_error else TimingEvidence.from_section(self.latency)

    @property
    def op_trace(self) -> OpTrace | None:
        """The aten ops and casts of one forward per mode (optrace.py; None: not traced)."""
        return None if self.ops is None else OpTrace.from_sections(self)

    @property
    def extras(self) -> dict[str, Any]:
        """Top-level sections other tools added (placements): kept as read, written back."""
        return dict(self.model_extra or {})

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

    # ---- JSON ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return dump(self)

    def to_json(self, indent: int | None = 2) -> str:
        """Strict JSON: a value that is not finite (float16 overflow → NaN) is written null."""
        return json.dumps(finite_or_null(self.to_dict()), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Any) -> ExperimentResult:
        """Strict: DocumentFormatError naming `result` and the first bad field."""
        return read(cls, data, cls.KIND)

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


#: Sections only some runs have: absent from the file when the run has none.
_SOMETIMES = ("guard", "train", "data", "accuracy", "model_info", "input", "routes")


def result_schema(sections: dict[str, type[Part]] | None = None) -> dict[str, Any]:
    """The published schema of the result document (tools/write_schemas.py writes it).

    `sections`: optional top-level objects that layers above the result add to it (`run
    --placements` writes `placements`); each is described by its own part.
    """
    # Type forms made at run time (`part | None`) are values to a type checker.
    fields: dict[str, Any] = {key: (part | None, None) for key, part in (sections or {}).items()}
    extended = create_model("ResultPart", __base__=ExperimentResult, **fields)
    return schema(
        extended,
        SCHEMA,
        "Autocast Explorer result",
        "One config measured in float32 and under torch.autocast('cpu'): written by "
        "`autocast-explorer run --json`, the window's File › Save and experimentFinished. "
        "Readers ignore keys they do not know.",
        defs={"config": config_schema(closed=False)},
    )


def _interval_cells(evidence: TimingEvidence | None) -> dict[str, str]:
    """speedup_low / speedup_high for a CSV row ('' where no interval was measured)."""
    interval = evidence.interval if evidence is not None else None
    if interval is None:
        return {"speedup_low": "", "speedup_high": ""}
    return {"speedup_low": f"{interval.low:.4f}", "speedup_high": f"{interval.high:.4f}"}

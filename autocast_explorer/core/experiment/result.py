"""The result of one experiment and its JSON/CSV forms (schema `autocast-explorer/result/1`).

The JSON names are a contract with presenters and testers (docs/file-formats.md). Loading
is strict: a foreign, truncated or corrupt document raises ResultFormatError with the path of
the first bad field, and nothing in a file is ever executed.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from autocast_explorer.core.documents.reader import (
    DocumentFormatError,
    JsonReader,
    clean_text,
    describe_slip,
    document_kind,
    finite_or_null,
    load_document,
)
from autocast_explorer.core.experiment.agreement import Agreement, Histogram
from autocast_explorer.core.experiment.capture import LayerDtypes, LayerRecord
from autocast_explorer.core.experiment.certainty import SpeedCall, TimingEvidence, judge
from autocast_explorer.core.experiment.config import ConfigError, ExperimentConfig
from autocast_explorer.core.experiment.guards import ForwardEstimate
from autocast_explorer.core.experiment.timing import LatencyStats
from autocast_explorer.core.experiment.training import TrainReport
from autocast_explorer.core.hardware.cpu import Environment
from autocast_explorer.core.numerics.flips import Flip, MarginBin, TopK
from autocast_explorer.core.numerics.layer_error import LayerError
from autocast_explorer.core.numerics.optrace import OpTrace

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


@dataclass(frozen=True)
class ExperimentResult:
    """Everything measured for one config: latency, dtypes per layer, agreement, environment."""

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
    train: TrainReport | None = None  # training mode: losses, dtypes, saved bytes (training.py)
    #: The speedup's interval, stalled blocks and the machine's load (None: saved before them).
    evidence: TimingEvidence | None = None

    @property
    def slower_ms(self) -> float:
        """The slower mode's median: what the time guard's estimate forecast."""
        auto = self.autocast.median_ms if self.autocast is not None else 0.0
        return max(self.plain.median_ms, auto)

    @property
    def speedup(self) -> float:
        """plain median / autocast median: above 1 means autocast was faster (NaN: not timed)."""
        if self.autocast is None or self.autocast.median_ms <= 0:
            return float("nan")
        return self.plain.median_ms / self.autocast.median_ms

    @property
    def speed_call(self) -> SpeedCall:
        """What the speedup supports: faster, slower, same, can't tell or too noisy to tell."""
        iqrs = tuple(
            s.iqr_ms / s.median_ms for s in (self.plain, self.autocast) if s and s.median_ms > 0
        )
        return judge(self.speedup, self.evidence, self.environment.threads, iqrs)

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
        def stats(s: LatencyStats | None) -> dict[str, Any] | None:
            return None if s is None else latency_to_dict(s, self.flops)

        data: dict[str, Any] = {
            "schema": SCHEMA,
            "created": self.created,
            "config": self.config.to_dict(),
            "environment": self.environment.to_dict(),
            "latency": {
                "plain": stats(self.plain),
                "autocast": stats(self.autocast),
                "speedup": self.speedup,
                **(self.evidence.to_dict() if self.evidence is not None else {}),
            },
            "flops_per_forward": self.flops,
            "output_dtype": {
                "plain": self.output_dtype_plain,
                "autocast": self.output_dtype_autocast or None,
            },
            "layers": [
                {
                    "name": layer.name,
                    "kind": layer.kind,
                    "out_shape": list(layer.out_shape),
                    "plain": layer.plain.to_dict(),
                    "autocast": layer.autocast.to_dict() if layer.autocast else None,
                    **({"error": layer.error.to_dict()} if layer.error else {}),
                }
                for layer in self.layers
            ],
            "agreement": _agreement_to_dict(self.agreement),
            "warnings": list(self.warnings),
        }
        if self.autocast_error:
            data["autocast_error"] = self.autocast_error
        if self.fast_path is not None:
            data["fast_path"] = dict(self.fast_path)
        if self.op_trace is not None:
            data.update(self.op_trace.to_dict())
        if self.guard is not None:
            data["guard"] = self.guard.to_dict()
        if self.train is not None:
            data["train"] = self.train.to_dict()
        data.update(self.extras)
        return data

    def to_json(self, indent: int | None = 2) -> str:
        """Strict JSON: a value that is not finite (float16 overflow → NaN) is written null."""
        return json.dumps(finite_or_null(self.to_dict()), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Any) -> ExperimentResult:
        """Strict: DocumentFormatError naming `result` and the first bad field."""
        with document_kind("result"):
            return cls._read(JsonReader(data, ""))

    @classmethod
    def _read(cls, r: JsonReader) -> ExperimentResult:
        config = read_header(r, SCHEMA)
        latency = r.obj("latency")
        output_dtype = r.obj("output_dtype")
        autocast_error = r.text("autocast_error", default="", multiline=True)
        failed = bool(autocast_error)
        layers = tuple(
            LayerRecord(
                name=layer.text("name"),
                kind=layer.text("kind"),
                plain=_dtypes(layer.obj("plain")),
                autocast=(
                    None
                    if failed and layer.data.get("autocast") is None
                    else _dtypes(layer.obj("autocast"))
                ),
                out_shape=tuple(layer.wholes("out_shape", required=False, minimum=0)),
                error=_optional(layer, "error", lambda d, _: LayerError.from_dict(d)),
            )
            for layer in r.objects("layers")
        )
        known = {
            "schema",
            "created",
            "config",
            "environment",
            "latency",
            "flops_per_forward",
            "output_dtype",
            "layers",
            "agreement",
            "warnings",
            "autocast_error",
            "fast_path",
            "guard",
            "train",
            *OpTrace.JSON_KEYS,
        }
        fast_path = r.data.get("fast_path")
        if fast_path is not None and not (
            isinstance(fast_path, dict) and all(isinstance(v, bool) for v in fast_path.values())
        ):
            raise ResultFormatError("fast_path: expected an object of true/false per mode")
        return cls(
            config=config,
            environment=Environment.from_dict(r.obj("environment").data),
            plain=latency_from_reader(latency.obj("plain")),
            autocast=None if failed else latency_from_reader(latency.obj("autocast")),
            output_dtype_plain=output_dtype.text("plain"),
            output_dtype_autocast="" if failed else output_dtype.text("autocast"),
            layers=layers,
            agreement=None if failed else _agreement_from_reader(r.obj("agreement")),
            flops=r.whole("flops_per_forward", minimum=0),
            warnings=tuple(r.texts("warnings", required=False, multiline=True)),
            created=r.text("created", default=""),
            extras={k: v for k, v in r.data.items() if k not in known},
            op_trace=_optional(r, "ops", lambda _d, _p: OpTrace.from_dict(r.data)),
            guard=ForwardEstimate.from_reader(r.obj("guard")) if "guard" in r.data else None,
            autocast_error=autocast_error,
            fast_path=dict(fast_path) if fast_path is not None else None,
            train=TrainReport.from_reader(r.obj("train")) if "train" in r.data else None,
            evidence=None if failed else TimingEvidence.from_reader(latency),
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> ExperimentResult:
        with document_kind("result"):
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


def read_header(r: JsonReader, schema: str) -> ExperimentConfig:
    """The start of every document of ours: check its schema tag, then read its config."""
    found = r.text("schema")
    if found != schema:
        raise r.fail("schema", f"expected {schema!r}, got {found[:80]!r}")
    try:
        return ExperimentConfig.from_dict(r.obj("config").data)
    except (ConfigError, TypeError) as exc:
        raise r.fail("config", clean_text(str(exc))) from None


def latency_to_dict(stats: LatencyStats, flops: int | None = None) -> dict[str, Any]:
    """A latency entry as every document writes it (gflops only when FLOPs are known)."""
    data: dict[str, Any] = {
        "median_ms": stats.median_ms,
        "p25_ms": stats.p25_ms,
        "p75_ms": stats.p75_ms,
        "iqr_ms": stats.iqr_ms,
        "samples": stats.samples,
        "cold_ms": stats.cold_ms,
        "block_size": stats.block_size,
    }
    if flops is not None:
        data["gflops"] = stats.gflops(flops)
    data["times_ms"] = list(stats.times_ms)
    return data


def _dtypes(r: JsonReader) -> LayerDtypes:
    return LayerDtypes(in_dtype=r.text("in"), out_dtype=r.text("out"))


def latency_from_reader(r: JsonReader) -> LatencyStats:
    """Durations are ≥ 0, counts whole: a negative median or 2.5 samples is refused."""
    return LatencyStats(
        median_ms=r.number("median_ms", minimum=0),
        p25_ms=r.number("p25_ms", minimum=0),
        p75_ms=r.number("p75_ms", minimum=0),
        iqr_ms=r.number("iqr_ms", minimum=0),
        samples=r.whole("samples", minimum=0),
        cold_ms=r.number("cold_ms", minimum=0),
        block_size=r.whole("block_size", minimum=1, default=1),
        times_ms=tuple(r.numbers("times_ms", required=False, minimum=0)),
    )


def _agreement_to_dict(a: Agreement | None) -> dict[str, Any] | None:
    if a is None:
        return None
    return {
        "rows": a.rows,
        "agree": a.agree,
        "fraction": a.fraction,
        "max_abs_diff": a.max_abs_diff,
        "mean_abs_diff": a.mean_abs_diff,
        "allclose": a.allclose,
        "atol": a.atol,
        "rtol": a.rtol,
        "cosine": a.cosine,
        "histogram": {"edges": list(a.histogram.edges), "counts": list(a.histogram.counts)},
        **_deep_agreement(a),
    }


def _agreement_from_reader(agreement: JsonReader) -> Agreement:
    """The agreement section, read strictly (counts whole, fractions in 0 … 1)."""
    hist = agreement.obj("histogram")
    rows = agreement.whole("rows", minimum=0)
    agree = agreement.whole("agree", minimum=0)
    if agree > rows:
        raise agreement.fail("agree", "expected at most `rows`")
    fraction = agreement.number("fraction", minimum=0)
    if fraction > 1:
        raise agreement.fail("fraction", "expected a number in 0 … 1")
    return Agreement(
        rows=rows,
        agree=agree,
        fraction=fraction,
        max_abs_diff=agreement.number("max_abs_diff", nullable=True, minimum=0),
        mean_abs_diff=agreement.number("mean_abs_diff", nullable=True, minimum=0),
        allclose=agreement.boolean("allclose"),
        atol=agreement.number("atol", minimum=0),
        rtol=agreement.number("rtol", default=1e-5, minimum=0),
        cosine=agreement.number("cosine", nullable=True),
        histogram=Histogram(
            edges=tuple(hist.numbers("edges")),
            counts=tuple(hist.wholes("counts", minimum=0)),
        ),
        topk=_optional(agreement, "topk", TopK.from_dict),
        flips=tuple(_optional_list(agreement, "flips", Flip.from_dict)),
        margin_bins=tuple(_optional_list(agreement, "flip_rate_by_margin", MarginBin.from_dict)),
    )


def _deep_agreement(a: Agreement) -> dict[str, Any]:
    """The agreement keys of the numerics (top-k, flips; absent when not measured)."""
    data: dict[str, Any] = {}
    if a.topk is not None:
        data["topk"] = a.topk.to_dict()
        data["flips"] = [f.to_dict() for f in a.flips]
        data["flip_rate_by_margin"] = [b.to_dict() for b in a.margin_bins]
    return data


def _optional(r: JsonReader, key: str, parse: Callable[[Any, str], Any]) -> Any:
    """parse(r.data[key], path) when the key is present (older files lack it), else None."""
    if key not in r.data:
        return None
    return _parsed(parse, r.data[key], r.where(key))


def _optional_list(r: JsonReader, key: str, parse: Callable[[Any, str], Any]) -> list[Any]:
    """[parse(item, path) …] for a list that older files lack (then [])."""
    value = r.data.get(key, [])
    if not isinstance(value, list):
        raise r.fail(key, "expected a list")
    return [_parsed(parse, item, f"{r.where(key)}[{i}]") for i, item in enumerate(value)]


def _parsed(parse: Callable[[Any, str], Any], value: Any, path: str) -> Any:
    """A part read by its own from_dict; a slip in it is refused with the part's path."""
    try:
        return parse(value, path)
    except DocumentFormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise DocumentFormatError(f"{path}: {describe_slip(exc)}") from None

"""Where autocast is placed changes what it costs: per-call, hoisted or pre-cast.

* per-call: `with torch.autocast(...)` around each forward, as the tutorial writes it. Every
  region starts with an empty cast cache, so every weight and bias is cast again each forward.
* hoisted: one autocast region around the whole loop of forwards. Inside one region, autocast
  caches the casts of leaf tensors that require grad (the weights), so after the first forward
  only the input is cast. Run under torch.no_grad, not inference_mode, where the cache and the
  `aten._to_copy` op differ.
* pre-cast: model and input converted to the low-precision dtype once; no autocast at all.

Casts are counted with a dispatch mode (core.optrace), not assumed. The three placements and
float32 are timed side by side, blocks alternated, so the comparison is fair on a noisy CPU.
"""

from __future__ import annotations

import contextlib
import copy
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

import torch
from pydantic import Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from autocast_explorer.core.documents.field_types import NonNegative, Text, Whole, WholeMap, refuse
from autocast_explorer.core.documents.held import Carried, DerivingPart, derive, write_always
from autocast_explorer.core.documents.model import Part, dump, read
from autocast_explorer.core.experiment import guards
from autocast_explorer.core.experiment.certainty import (
    TimingEvidence,
    judge,
    speedup_figure,
)
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.families.user.guard import user_phase
from autocast_explorer.core.experiment.forecast import ConfirmFn
from autocast_explorer.core.experiment.interval import SpeedupInterval, ratio_text
from autocast_explorer.core.experiment.model import build, low_precision_dtype
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.experiment.timing import LatencyStats, measure_paired
from autocast_explorer.core.numerics.optrace import (
    CastSummary,
    OpTracer,
    count_casts,
    parameter_sources,
)
from autocast_explorer.core.runtime.autocast import autocast_context
from autocast_explorer.core.runtime.progress import CancelFn, ProgressFn, Reporter
from autocast_explorer.core.runtime.threads import torch_threads

PLACEMENTS: tuple[str, ...] = ("per_call", "hoisted", "pre_cast")
LABELS: dict[str, str] = {"per_call": "per-call", "hoisted": "hoisted", "pre_cast": "pre-cast"}
EXTRAS_KEY = "placements"


class PlacementStats(DerivingPart):
    """One placement: its latency and the casts observed in a steady-state forward (one of
    the result's `placements`, under its name).

    `casts_per_forward` / `cast_bytes` count what every forward pays once the loop runs;
    `one_time_casts` / `one_time_cast_bytes` what is paid once (hoisted's first forward in
    the region, pre-cast's conversion of model and input). Bytes are those of the copies the
    casts write, as in the run result's `casts.bytes` (core.optrace).
    """

    schema_name: ClassVar[str] = "placement"
    derived_keys: ClassVar[tuple[str, ...]] = ("median_ms",)

    #: per_call, hoisted or pre_cast: the key the file holds it under.
    name: Annotated[str, Carried(), SkipJsonSchema()] = Field(default="", exclude=True)
    median_ms: Annotated[NonNegative, Field(description="equals latency.median_ms")] = 0.0
    casts_per_forward: Whole
    cast_bytes: Whole
    one_time_casts: Whole
    one_time_cast_bytes: Whole
    cast_ops: WholeMap
    #: Per-forward casts of model parameters by what they convert ('Conv2d.weight': 2, …).
    cast_sources: Annotated[
        WholeMap,
        Field(
            description="per-forward casts of model parameters, by module class and parameter "
            "(Linear.weight)"
        ),
    ] = Field(default_factory=dict)
    latency: LatencyStats
    #: float32 ÷ this placement over the rounds both kept: the speedup's 95% interval.
    interval: Annotated[
        SpeedupInterval | None,
        Field(
            alias="speedup_interval",
            description="float32 ÷ this placement, paired by round (null: older files)",
        ),
    ] = None

    @model_validator(mode="after")
    def _one_median(self) -> PlacementStats:
        self.require_in_files()
        if "median_ms" in self.model_fields_set and self.median_ms != self.latency.median_ms:
            raise refuse("differs from latency.median_ms", at="median_ms")
        derive(self, median_ms=self.latency.median_ms)
        write_always(self, "cast_sources", "interval")
        return self

    @property
    def label(self) -> str:
        return LABELS[self.name]

    def to_dict(self) -> dict[str, Any]:
        return dump(self)


class PlacementReport(Part):
    """The three placements and float32, measured side by side, with the sentence to show
    (run --placements: where autocast is entered; the result's `placements`)."""

    schema_name: ClassVar[str] = "placements"

    dtype: Text
    per_call: PlacementStats
    hoisted: PlacementStats
    pre_cast: PlacementStats
    float32: LatencyStats
    explanation: Text

    @model_validator(mode="before")
    @classmethod
    def _named_by_key(cls, data: Any) -> Any:
        """Each placement knows its name, the key a file holds it under."""
        if isinstance(data, dict):
            data = {
                key: {**value, "name": key}
                if key in PLACEMENTS and isinstance(value, dict)
                else value
                for key, value in data.items()
            }
        return data

    @property
    def modes(self) -> tuple[PlacementStats, PlacementStats, PlacementStats]:
        return (self.per_call, self.hoisted, self.pre_cast)

    def speedup(self, mode: PlacementStats) -> float:
        """float32 ÷ `mode`: its paired ratio (the ratio of medians in older files)."""
        return speedup_figure(self.float32.median_ms, mode.median_ms, _evidence(mode.interval))

    def vs_float32(self, mode: PlacementStats) -> str:
        """'1.80× faster (95%: 1.72–1.86)', '2.50× slower (95%: …)', 'too noisy to tell' (no
        figure) or 'about as fast (…)': the call its interval supports."""
        return _versus(self.speedup(mode), mode.interval, "float32", alone=True)

    def to_dict(self) -> dict[str, Any]:
        return dump(self)

    @classmethod
    def from_dict(cls, data: Any, path: str = EXTRAS_KEY) -> PlacementReport:
        """Strict: every placement must be present and well typed (DocumentFormatError)."""
        return read(cls, data, at=path)


def format_bytes(count: float) -> str:
    """1536 -> '1.5 KiB' (binary units: the sizes are of tensors in memory)."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(count) < 1024 or unit == "GiB":
            return f"{count:,.0f} {unit}" if unit == "B" else f"{count:,.1f} {unit}"
        count /= 1024
    raise AssertionError("unreachable")


def casts_text(count: int) -> str:
    """'no casts', '1 cast', '7 casts'."""
    if count == 0:
        return "no casts"
    return f"{count} cast" if count == 1 else f"{count} casts"


def _evidence(interval: SpeedupInterval | None) -> TimingEvidence | None:
    return None if interval is None else TimingEvidence(interval=interval)


def _versus(
    ratio: float, interval: SpeedupInterval | None, reference: str, alone: bool = False
) -> str:
    """`ratio` = the reference's time ÷ this one's, in words with its interval and the call it
    supports: '1.32× faster than per-call (95%: 1.25–1.40)', 'about as fast as per-call
    (1.01×, 95%: …)', 'too noisy to tell against per-call' (no figure). `alone`: no reference
    named."""
    if not (math.isfinite(ratio) and ratio > 0):
        return "not timed" if alone else f"not comparable with {reference}"
    call = judge(ratio, _evidence(interval))
    than = "" if alone else f" than {reference}"
    if call.kind == "faster":
        return f"{ratio_text(ratio)}× faster{than}{_band(interval, ' (', ')')}"
    if call.kind == "slower":
        return f"{ratio_text(1 / ratio)}× slower{than}{_band(interval, ' (', ')', slower=True)}"
    if call.kind == "same":
        words = "about as fast" if alone else f"about as fast as {reference}"
        return f"{words} ({ratio_text(ratio)}×{_band(interval, ', ', '')})"
    # No figure where the interval cannot tell: the words say so instead.
    if call.kind == "unclear":
        return "can't tell" if alone else f"can't tell whether faster{than}"
    return "too noisy to tell" if alone else f"too noisy to tell against {reference}"


def _band(interval: SpeedupInterval | None, lead: str, tail: str, slower: bool = False) -> str:
    """The interval's words between `lead` and `tail` (as slowdown factors when `slower`)."""
    if interval is None:
        return ""
    return f"{lead}{interval.slower_text() if slower else interval.text()}{tail}"


def explain(
    dtype: str,
    float32_ms: float,
    per_call: PlacementStats,
    hoisted: PlacementStats,
    pre_cast: PlacementStats,
    vs_per_call: dict[str, SpeedupInterval | None] | None = None,
) -> str:
    """Where a per-call forward's time goes, in words, from the measured numbers.

    `vs_per_call`: per placement name, the interval of per-call's time ÷ its own, paired by
    round; each comparison then says only what its interval supports.
    """
    bands = vs_per_call or {}
    pc, pre = per_call.median_ms, pre_cast.median_ms

    def against_per_call(mode: PlacementStats) -> tuple[float, SpeedupInterval | None]:
        band = bands.get(mode.name)
        return speedup_figure(pc, mode.median_ms, _evidence(band)), band

    hoisted_ratio, hoisted_band = against_per_call(hoisted)
    pre_ratio, pre_band = against_per_call(pre_cast)
    casts = (
        f"Per-call autocast made {casts_text(per_call.casts_per_forward)} "
        f"({format_bytes(per_call.cast_bytes)}) in every forward; one hoisted region cached "
        f"{hoisted.one_time_casts} of them and made {casts_text(hoisted.casts_per_forward)} "
        f"({format_bytes(hoisted.cast_bytes)}) per forward, "
        f"{_versus(hoisted_ratio, hoisted_band, 'per-call')}; "
        f"pre-casting made {casts_text(pre_cast.casts_per_forward)} per forward, "
        f"{_versus(pre_ratio, pre_band, 'per-call')}."
    )
    kind = judge(pre_ratio, _evidence(pre_band)).kind if math.isfinite(pre_ratio) else "untimed"
    if kind == "faster":
        share = 1 - 1 / pre_ratio
        where = f"Casting and autocast's bookkeeping take about {share:.0%} of a per-call forward"
    elif kind in ("same", "slower"):
        where = "Casting costs too little to measure here"
    else:
        where = "Whether casting costs anything here, this run cannot tell"
    compute = _versus(
        speedup_figure(float32_ms, pre, _evidence(pre_cast.interval)),
        pre_cast.interval,
        "float32",
    )
    return (
        f"{casts} {where}; the rest is the {dtype} compute itself, which ran {compute} "
        f"(pre-cast {pre:.3f} ms vs float32 {float32_ms:.3f} ms)."
    )


def measure_placements(
    config: ExperimentConfig,
    progress: ProgressFn | None = None,
    cancel: CancelFn | None = None,
) -> PlacementReport:
    """Count casts per placement, then time float32 and the three placements side by side.

    Each placement is timed for `config.min_time` seconds, like a mode of `run_experiment`.
    """
    reporter = Reporter(progress, cancel)
    reporter.report(0.0, "checking memory and time guards")
    guards.check(config)
    low = low_precision_dtype(config)
    # no_grad around everything, as around the tutorial's timed loop; weights still require
    # grad, which is what lets one autocast region cache their casts (hoisted).
    with (
        torch_threads(config.threads),
        torch.no_grad(),
        user_phase(config, "measuring the placements"),
    ):
        reporter.report(0.02, "building the model and a pre-cast copy")
        forwards = _Forwards(*build(config), low)
        reporter.check()
        reporter.report(0.04, "counting casts per placement")
        casts = forwards.count_casts()
        reporter.check()
        timing = measure_paired(
            [forwards.float32, forwards.per_call, forwards.in_region, forwards.pre_cast],
            config.min_time,
            reporter.span(0.08, 1.0),
            labels=["float32", "per-call", "hoisted", "pre-cast"],
            block_contexts=[None, None, forwards.hoisted_region, None],
            max_time=math.inf,  # every placement gets `min_time` of kept blocks
        )
    index = {name: k for k, name in enumerate(("float32", *PLACEMENTS))}
    f32_stats = timing.stats[0]
    modes = {
        name: _placement_stats(
            name, timing.stats[index[name]], casts[name], timing.interval_between(0, index[name])
        )
        for name in PLACEMENTS
    }
    reporter.report(1.0, "done")
    return PlacementReport(
        dtype=config.dtype,
        float32=f32_stats,
        explanation=explain(
            config.dtype,
            f32_stats.median_ms,
            **modes,
            vs_per_call={
                name: timing.interval_between(index["per_call"], index[name])
                for name in ("hoisted", "pre_cast")
            },
        ),
        **modes,
    )


@dataclass(frozen=True)
class _Casts:
    """The casts of one placement: those of a steady-state forward, and those paid once."""

    steady: CastSummary
    once_count: int = 0
    once_bytes: int = 0


def _placement_stats(
    name: str, latency: LatencyStats, casts: _Casts, interval: SpeedupInterval | None
) -> PlacementStats:
    return PlacementStats(
        name=name,
        latency=latency,
        casts_per_forward=casts.steady.count,
        cast_bytes=casts.steady.bytes,
        one_time_casts=casts.once_count,
        one_time_cast_bytes=casts.once_bytes,
        cast_ops=casts.steady.by_op,
        cast_sources=casts.steady.by_kind,
        interval=interval,
    )


class _Forwards:
    """The forward of each placement over one model and input, and a pre-cast copy of both."""

    def __init__(self, model: torch.nn.Module, x: torch.Tensor, low: torch.dtype) -> None:
        self.model, self.x, self.low = model, x, low
        with OpTracer() as conversion:
            self.low_model = copy.deepcopy(model).to(low)
            self.low_x = x.to(low)
        self.conversion = conversion.casts()

    def float32(self) -> torch.Tensor:
        out: torch.Tensor = self.model(self.x)
        return out

    def per_call(self) -> torch.Tensor:
        with autocast_context(self.low):
            out: torch.Tensor = self.model(self.x)
        return out

    def in_region(self) -> torch.Tensor:
        """One forward inside a hoisted region (the caller has entered it)."""
        out: torch.Tensor = self.model(self.x)
        return out

    def pre_cast(self) -> torch.Tensor:
        out: torch.Tensor = self.low_model(self.low_x)
        return out

    @contextlib.contextmanager
    def hoisted_region(self) -> Iterator[None]:
        # The first forward fills the cast cache outside the timer; the block's timed
        # forwards then run as forwards in the middle of a long hoisted loop do.
        with autocast_context(self.low):
            self.model(self.x)
            yield

    def count_casts(self) -> dict[str, _Casts]:
        """Each placement's casts, observed: per forward once the loop runs, and once."""
        self.per_call()  # first call outside the counter: lazy one-time work is not a cast
        sources = parameter_sources(self.model)
        per_call = count_casts(self.per_call, sources)
        with autocast_context(self.low):
            hoisted_first = count_casts(self.in_region, sources)
            hoisted_steady = count_casts(self.in_region, sources)
        pre_cast = count_casts(self.pre_cast, parameter_sources(self.low_model))
        return {
            "per_call": _Casts(per_call),
            "hoisted": _Casts(
                hoisted_steady,
                hoisted_first.count - hoisted_steady.count,
                hoisted_first.bytes - hoisted_steady.bytes,
            ),
            "pre_cast": _Casts(pre_cast, self.conversion.count, self.conversion.bytes),
        }


def attach(result: ExperimentResult, report: PlacementReport) -> ExperimentResult:
    """The result with a `placements` section in its JSON (kept in `extras`)."""
    return result.model_copy(update={EXTRAS_KEY: report.to_dict()})


def from_result(result: ExperimentResult) -> PlacementReport | None:
    """The placements a result carries (e.g. loaded from JSON), or None when it has none."""
    if EXTRAS_KEY not in result.extras:
        return None
    return PlacementReport.from_dict(result.extras[EXTRAS_KEY])


def run_with_placements(
    config: ExperimentConfig,
    progress: ProgressFn | None = None,
    cancel: CancelFn | None = None,
    confirm: ConfirmFn | None = None,
) -> ExperimentResult:
    """`run_experiment` then `measure_placements`, one result (what `run --placements` does)."""
    reporter = Reporter(progress, cancel)
    first, second = reporter.span(0.0, 0.4), reporter.span(0.4, 1.0)
    result = run_experiment(config, progress=first.report, cancel=cancel, confirm=confirm)
    if result.autocast_error:
        return result  # nothing to place: the autocast forward raised (the result says so)
    return attach(result, measure_placements(config, progress=second.report, cancel=cancel))


def format_placements(report: PlacementReport) -> str:
    """The lines `run --placements` adds to the summary."""
    lines = [
        f"Autocast placement ({report.dtype}; medians timed side by side, casts observed):",
        f"  {'float32':<9}{report.float32.median_ms:9.3f} ms",
    ]
    for mode in report.modes:
        once = (
            f", plus {mode.one_time_casts} once ({format_bytes(mode.one_time_cast_bytes)})"
            if mode.one_time_casts
            else ""
        )
        lines.append(
            f"  {mode.label:<9}{mode.median_ms:9.3f} ms  {casts_text(mode.casts_per_forward)} "
            f"per forward ({format_bytes(mode.cast_bytes)}){once}; vs float32: "
            f"{report.vs_float32(mode)}"
        )
        if mode.cast_sources:
            of = ", ".join(f"{n}× {name}" for name, n in mode.cast_sources.items())
            lines.append(f"  {'':<9}of which parameters: {of}")
    lines.append(f"  {report.explanation}")
    return "\n".join(lines)

"""Compare saved runs: several result files side by side, each labelled with its machine.

Typical use: one result made headless on a server, one on a laptop. Files are untrusted input:
each is size-checked before reading and parsed strictly by ExperimentResult.from_json; any
problem becomes a ResultFileError whose message names the file in one line. Only result files
(`autocast-explorer/result/1`) are compared; a sweep file is recognised and refused by name.
A result whose autocast forward raised is compared too: its float32 side was measured, and
that autocast could not run on that machine is itself the finding.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autocast_explorer.core.data.answers import AccuracyReport
from autocast_explorer.core.data.summary import interval_text
from autocast_explorer.core.documents.reader import MAX_DOCUMENT_BYTES, clean_text
from autocast_explorer.core.experiment.certainty import SPEEDUP_MEANING
from autocast_explorer.core.experiment.families import family
from autocast_explorer.core.experiment.interval import LEVEL
from autocast_explorer.core.experiment.pace import (
    SPEED_CALL_WORDS,
    bounds_text,
    ratio_text,
    rough_text,
)
from autocast_explorer.core.experiment.result import ExperimentResult, ResultFormatError
from autocast_explorer.core.experiment.speed_words import untold_words
from autocast_explorer.core.experiment.training import TrainReport

SWEEP_SCHEMA_PREFIX = "autocast-explorer/sweep/"
MAX_COLUMN_CHARS = 44


class ResultFileError(ValueError):
    """A result file cannot be used; str() is one line naming the file and the problem."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def load_result_file(path: str | os.PathLike[str]) -> ExperimentResult:
    """Read one result JSON; ResultFileError for a missing, oversized, corrupt or foreign file."""
    target = Path(path)
    name = clean_text(str(target))
    try:
        if not target.exists():
            raise ResultFileError(name, "no such file")
        if not target.is_file():
            raise ResultFileError(name, "is not a file")
        with target.open("rb") as handle:  # one byte over the limit is enough to refuse
            raw = handle.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as exc:
        raise ResultFileError(name, f"cannot read: {exc.strerror or exc}") from None
    try:
        # Size, UTF-8, syntax and nesting: the checks of the one reader every document shares.
        result = ExperimentResult.from_json(raw)
    except ResultFormatError as exc:
        message = _one_line(str(exc))
        if exc.detail.startswith("schema:") and SWEEP_SCHEMA_PREFIX in message:
            message = "is a sweep file; compare takes result files (autocast-explorer run --json)"
        raise ResultFileError(name, message) from None
    except (TypeError, ValueError, KeyError, AttributeError, OverflowError) as exc:
        raise ResultFileError(name, f"not a valid result ({_one_line(str(exc))})") from None
    return result


def _one_line(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class ComparedRun:
    """One loaded result and the label that names its machine in tables and legends."""

    label: str
    source: str
    result: ExperimentResult


@dataclass(frozen=True)
class CompareRow:
    """One run's figures, the numbers a side-by-side table or a legend needs."""

    label: str
    source: str
    cpu: str
    torch: str
    threads: int
    native_low_precision: str
    config: str
    dtype: str
    plain_ms: float
    plain_p25_ms: float
    plain_p75_ms: float
    autocast_ms: float  # NaN (and the agreement fields None) when the autocast forward raised
    autocast_p25_ms: float
    autocast_p75_ms: float
    speedup: float
    agree: int | None
    rows: int | None
    allclose: bool | None
    max_abs_diff: float
    autocast_error: str = ""
    speedup_low: float = math.nan  # the speedup's interval (NaN: saved before intervals)
    speedup_high: float = math.nan
    speedup_level: float = math.nan
    call: str = ""  # faster, slower, same, unclear, noisy, untimed (certainty.judge)
    rough: str = ""  # why a faster/slower call's factor is uncertain ('' when firm)


@dataclass(frozen=True)
class OverlaySeries:
    """One run in the overlay chart: its label and the bars (median, p25, p75) per mode."""

    label: str
    modes: tuple[str, ...]  # float32 only when the autocast forward raised
    median_ms: tuple[float, ...]
    p25_ms: tuple[float, ...]
    p75_ms: tuple[float, ...]
    speedup: float
    autocast_error: str = ""
    speedup_low: float = math.nan  # the speedup's interval (NaN: none recorded)
    speedup_high: float = math.nan
    speedup_level: float = math.nan
    call: str = ""
    rough: str = ""
    #: Why its bars are no result (speed_words.untold_words); '' where a figure may be stated.
    untold_why: str = ""

    @property
    def whisker(self) -> bool:
        """Whether its interval is drawn: a 95% one, of a run whose figure may be stated."""
        return self.told and self.speedup_level >= LEVEL - 1e-9

    @property
    def told(self) -> bool:
        """Whether a speedup figure may be stated for this run (not can't tell/too noisy)."""
        return self.call not in ("noisy", "unclear") and self.speedup == self.speedup


@dataclass(frozen=True)
class Comparison:
    """Several runs, in the order given."""

    runs: tuple[ComparedRun, ...]

    def rows(self) -> list[CompareRow]:
        return [_row(run) for run in self.runs]

    def overlay(self) -> list[OverlaySeries]:
        """Data for a chart overlaying latencies and speedups, one series per run."""
        series = []
        for run in self.runs:
            r = run.result
            timed = [("float32", r.plain)]
            if r.autocast is not None:
                timed.append((r.config.dtype, r.autocast))
            series.append(
                OverlaySeries(
                    label=run.label,
                    modes=tuple(mode for mode, _ in timed),
                    median_ms=tuple(stats.median_ms for _, stats in timed),
                    p25_ms=tuple(stats.p25_ms for _, stats in timed),
                    p75_ms=tuple(stats.p75_ms for _, stats in timed),
                    speedup=r.speedup,
                    autocast_error=r.autocast_error,
                    untold_why=untold_words(r.speed_call),
                    **_interval_fields(r, level=True),
                )
            )
        return series

    def config_differences(self) -> list[str]:
        """Config fields that differ between the runs (timing budget excluded)."""
        if len(self.runs) < 2:
            return []
        dicts = [run.result.config.to_dict() for run in self.runs]
        ignored = {"min_time", "max_time", "allow_slow", "memory_budget_mb"}
        if all(run.result.config.mode != "train" for run in self.runs):
            ignored |= {"steps", "lr", "optimizer", "scaler"}  # unused when nothing trained
        keys = list(dict.fromkeys(key for d in dicts for key in d))  # families differ in keys
        return [
            key
            for key in keys
            if key not in ignored
            and any(key not in d or d[key] != dicts[0].get(key) for d in dicts)
        ]


def machine_label(result: ExperimentResult) -> str:
    """CPU, torch and threads: what distinguishes one machine's run from another's."""
    return result.environment.label()


def compare_results(
    results: Sequence[ExperimentResult], sources: Sequence[str] | None = None
) -> Comparison:
    """Label each result by its machine; runs from the same machine also get their source name."""
    names = list(sources) if sources is not None else [f"run {i + 1}" for i in range(len(results))]
    labels = [machine_label(r) for r in results]
    runs = []
    for label, source, result in zip(labels, names, results, strict=True):
        if labels.count(label) > 1:
            label = f"{label} ({Path(source).name})"
        runs.append(ComparedRun(label, source, result))
    return Comparison(tuple(runs))


def load_comparison(paths: Sequence[str | os.PathLike[str]]) -> Comparison:
    """Load every file (raising ResultFileError for the first bad one) and compare them."""
    if not paths:
        raise ValueError("give at least one result file")
    results = [load_result_file(p) for p in paths]
    return compare_results(results, [clean_text(str(p)) for p in paths])


def _native(result: ExperimentResult) -> str:
    from autocast_explorer.core.hardware.capabilities import native_support

    support = native_support(result.environment.cpu_flags, result.config.dtype)
    return f"yes ({support.present_text})" if support.native else "no"


def _config_text(result: ExperimentResult) -> str:
    """An MLP's widths, another family's name (its parameters get rows of their own)."""
    c = result.config
    fam = family(c)
    model = ",".join(map(str, c.widths)) if c.model == "mlp" else fam.title
    if c.is_user_model:
        model = c.title  # the spec and its arguments
    return (
        f"{model} · batch {c.batch}"
        + (f" · {c.activation}" if "activation" in fam.uses else "")
        + (f" · {c.head}" if c.head != "none" else "")
        + (f" · seed {c.seed}" if c.seed else "")
    )


def family_parameter_table(comparison: Comparison) -> list[tuple[str, list[str]]]:
    """One row per parameter of the non-MLP families compared ('—' where a run lacks it)."""
    configs = [run.result.config for run in comparison.runs]
    names: list[str] = []
    for config in configs:
        if config.model != "mlp":
            names += [p.name for p in family(config).params if p.name not in names]
    out = []
    for name in names:
        values = []
        for config in configs:
            own = config.model != "mlp" and any(p.name == name for p in family(config).params)
            value = getattr(config, name) if own else None
            if isinstance(value, tuple):
                value = ",".join(map(str, value))
            values.append("—" if value is None else str(value))
        out.append((name.replace("_", " "), values))
    return out


def autocast_error_text(result: ExperimentResult) -> str:
    """What a compare column says where autocast was not timed: the forward raised, and why."""
    text = "raised: " + " ".join(clean_text(result.autocast_error).split())
    if len(text) <= MAX_COLUMN_CHARS:
        return text
    return text[: MAX_COLUMN_CHARS - 1].rstrip() + "…"


def _row(run: ComparedRun) -> CompareRow:
    r = run.result
    env = r.environment
    a = r.agreement
    nan = float("nan")
    auto = r.autocast
    return CompareRow(
        label=run.label,
        source=run.source,
        cpu=env.cpu_model,
        torch=env.torch_version,
        threads=env.threads,
        native_low_precision=_native(r),
        config=_config_text(r),
        dtype=r.config.dtype,
        plain_ms=r.plain.median_ms,
        plain_p25_ms=r.plain.p25_ms,
        plain_p75_ms=r.plain.p75_ms,
        autocast_ms=auto.median_ms if auto is not None else nan,
        autocast_p25_ms=auto.p25_ms if auto is not None else nan,
        autocast_p75_ms=auto.p75_ms if auto is not None else nan,
        speedup=r.speedup,
        agree=a.agree if a is not None else None,
        rows=a.rows if a is not None else None,
        allclose=a.allclose if a is not None else None,
        max_abs_diff=a.max_abs_diff if a is not None else nan,
        autocast_error=r.autocast_error,
        **_interval_fields(r, level=True),
    )


def _interval_fields(r: ExperimentResult, level: bool) -> dict[str, Any]:
    """speedup_low/high (and _level), and the call, for a row or a chart series."""
    call = r.speed_call
    interval = call.interval
    fields: dict[str, Any] = {
        "speedup_low": interval.low if interval is not None else math.nan,
        "speedup_high": interval.high if interval is not None else math.nan,
        "call": call.kind,
        "rough": call.rough,
    }
    if level:
        fields["speedup_level"] = interval.level if interval is not None else math.nan
    return fields


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def comparison_table(comparison: Comparison) -> list[tuple[str, list[str]]]:
    """The side-by-side figures as text: (figure name, one value per run), in table order.

    Shared by the CLI table and the window's Compare table so both say the same thing.
    """
    rows = comparison.rows()
    raised = [autocast_error_text(run.result) for run in comparison.runs]

    def timed(values: list[str]) -> list[str]:
        """'—' in the columns of runs whose autocast forward raised."""
        return ["—" if r.autocast_error else v for r, v in zip(rows, values, strict=True)]

    return [
        ("file", [Path(r.source).name for r in rows]),
        ("CPU", [r.cpu for r in rows]),
        ("torch", [r.torch for r in rows]),
        ("threads", [str(r.threads) for r in rows]),
        ("native low precision", [r.native_low_precision for r in rows]),
        ("model", [r.config for r in rows]),
        *family_parameter_table(comparison),
        ("autocast dtype", [r.dtype for r in rows]),
        ("timed", [_timed_text(run.result) for run in comparison.runs]),
        ("plain median", [f"{r.plain_ms:.3f} ms" for r in rows]),
        ("plain p25–p75", [f"{r.plain_p25_ms:.3f}–{r.plain_p75_ms:.3f} ms" for r in rows]),
        (
            "autocast median",
            [
                text if r.autocast_error else f"{r.autocast_ms:.3f} ms"
                for r, text in zip(rows, raised, strict=True)
            ],
        ),
        (
            "autocast p25–p75",
            timed([f"{r.autocast_p25_ms:.3f}–{r.autocast_p75_ms:.3f} ms" for r in rows]),
        ),
        ("speedup", timed([_speedup_text(r) for r in rows])),
        ("speed call", timed([CALL_WORDS.get(r.call, r.call) for r in rows])),
        (
            "predictions agree",
            timed([f"{r.agree}/{r.rows}" if r.rows else "no predicted class" for r in rows]),
        ),
        ("allclose", timed([str(r.allclose) for r in rows])),
        ("max |diff|", timed([f"{r.max_abs_diff:.3g}" for r in rows])),
        *training_table(comparison),
        *accuracy_table(comparison),
    ]


def accuracy_table(comparison: Comparison) -> list[tuple[str, list[str]]]:
    """Held-out accuracy on real data, one value per run ('—' for a synthetic run)."""
    runs = [run.result for run in comparison.runs]
    if all(r.data is None for r in runs):
        return []
    accs = [r.accuracy for r in runs]

    def each(text: Callable[[AccuracyReport], str]) -> list[str]:
        return [text(a) if a is not None else "—" for a in accs]

    return [
        ("data", [r.data.name if r.data is not None else "synthetic" for r in runs]),
        ("accuracy float32", each(lambda a: f"{a.plain:.2%}")),
        ("accuracy autocast", each(lambda a: f"{a.autocast:.2%} ({a.dtype})")),
        ("accuracy difference", each(lambda a: interval_text(a).split(" (")[0])),
        (
            "95% interval",
            each(lambda a: f"{a.interval[0] * 100:+.1f} … {a.interval[1] * 100:+.1f} points"),
        ),
        ("rows flipped", each(lambda a: f"{a.flipped_total}/{a.rows}")),
    ]


def _timed_text(result: ExperimentResult) -> str:
    c = result.config
    if c.mode != "train":
        return "forward"
    return f"training step ({c.steps} steps, {c.optimizer}, lr {c.lr:g})"


def training_table(comparison: Comparison) -> list[tuple[str, list[str]]]:
    """Training figures, one value per run ('—' for an inference run); none if no run trained."""
    trains = [run.result.train for run in comparison.runs]
    if all(t is None for t in trains):
        return []

    def each(text: Callable[[TrainReport], str]) -> list[str]:
        return [text(t) if t is not None else "—" for t in trains]

    return [
        ("loss float32", each(lambda t: f"{t.loss['plain'][0]:.4f} → {t.loss['plain'][-1]:.4f}")),
        (
            "loss autocast",
            each(lambda t: f"{t.loss['autocast'][0]:.4f} → {t.loss['autocast'][-1]:.4f}"),
        ),
        (
            "held-out accuracy",
            each(
                lambda t: (
                    f"{t.accuracy['plain']:.1%} / {t.accuracy['autocast']:.1%}"
                    if t.has_accuracy
                    else f"none; held-out MSE {t.held_out_loss_text()}"
                )
            ),
        ),
        (
            "diverged at step",
            each(
                lambda t: " / ".join(str(t.diverged_at(m) or "no") for m in ("plain", "autocast"))
            ),
        ),
        ("loss dtype (autocast)", each(lambda t: t.loss_dtype.get("autocast", "?"))),
        (
            "gradient dtypes",
            each(lambda t: ", ".join(sorted(set(t.grad_dtypes.values()))) or "none"),
        ),
        (
            "saved for backward",
            each(
                lambda t: (
                    f"{t.saved_bytes['plain'] / 1e6:.2f} / {t.saved_bytes['autocast'] / 1e6:.2f} MB"
                )
            ),
        ),
        (
            "GradScaler",
            each(
                lambda t: (
                    f"scale {t.scaler.final_scale:g}, {t.scaler.skipped_steps} skipped"
                    if t.scaler.used
                    else "not used"
                )
            ),
        ),
    ]


def format_comparison(comparison: Comparison) -> str:
    """A side-by-side table: one column per run, one line per measured figure."""
    rows = comparison.rows()
    lines_spec = comparison_table(comparison)
    head = max(len(name) for name, _ in lines_spec)
    widths = [
        min(MAX_COLUMN_CHARS, max(len(values[i]) for _, values in lines_spec))
        for i in range(len(rows))
    ]
    out = []
    for name, values in lines_spec:
        cells = [_fit(v, w).ljust(w) for v, w in zip(values, widths, strict=True)]
        out.append(f"{name:<{head}}  " + "  ".join(cells).rstrip())
    differences = comparison.config_differences()
    out.append("")
    if differences:
        out.append("Note: the configs differ in " + ", ".join(differences) + ".")
    out.append(
        f"speedup = {SPEEDUP_MEANING} (plain median ÷ "
        "autocast median in files from before it was kept); above 1.00× autocast was faster; "
        "(95%: …) its interval."
    )
    return "\n".join(out)


#: The compare table's words for each call of certainty.judge.
CALL_WORDS: dict[str, str] = {
    kind: f"autocast {words}" if kind in ("faster", "slower") else words
    for kind, words in SPEED_CALL_WORDS.items()
}


def _speedup_text(row: CompareRow) -> str:
    """'1.72× (95%: 1.66–1.79)'; the figure alone for results saved before intervals, 'about
    7×' for a rough one; none where the run could not tell (the call column says why)."""
    speedup = row.speedup
    if speedup != speedup:
        return "n/a"
    if row.call in ("noisy", "unclear"):
        return "—"
    if row.rough:
        return f"about {rough_text(speedup if speedup >= 1 else 1 / speedup)}× ({row.rough})"
    if row.speedup_low != row.speedup_low:
        return f"{ratio_text(speedup)}×"
    if row.speedup_level < LEVEL - 1e-9:  # no interval of lower coverage is shown as one
        return f"{ratio_text(speedup)}×"
    band = bounds_text(row.speedup_low, row.speedup_high)  # as the interval writes itself
    return f"{ratio_text(speedup)}× ({row.speedup_level:.0%}: {band})"

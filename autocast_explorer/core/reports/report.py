"""A shareable report folder for one result: JSON, CSV, Markdown, charts, and reproduce.py.

`reproduce.py` (written by core/reports/reproduce.py) lets someone without the explorer check
the finding with nothing but torch: it rebuilds the same model of any family and its input
with the explorer's own construction code and prints the dtypes, agreement and its own
timings beside the original figures (for a training run: it trains both copies again and
prints losses, dtypes and saved bytes). A result whose autocast forward raised is reported
too, with that as its finding; its script checks whether the autocast forward raises again.

The folder is built whole in a temporary folder beside it and then swapped in, so a report is
never half old, half new, and an interrupted export leaves the previous report (or nothing).
A folder that holds anything but a report's files is refused, never swapped away.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autocast_explorer import __version__
from autocast_explorer.core.data.summary import accuracy_markdown
from autocast_explorer.core.documents.files import (
    TEMP_SUFFIX,
    UnwritablePath,
    check_writable,
    process_alive,
    resolve_link,
    temp_name,
    temp_prefix,
    write_atomic,
)
from autocast_explorer.core.experiment.certainty import speedup_basis
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.fallback import silent_fallbacks
from autocast_explorer.core.experiment.families import family
from autocast_explorer.core.experiment.input_record import input_words
from autocast_explorer.core.experiment.pace import SPEED_CALL_WORDS
from autocast_explorer.core.experiment.result import SCHEMA, ExperimentResult
from autocast_explorer.core.experiment.route_summary import route_cells
from autocast_explorer.core.experiment.summary import (
    autocast_error_finding,
    hardware_clause,
    kept_mark,
    speed_interval_words,
    verdict,
)
from autocast_explorer.core.reports.reproduce import reproduce_script

RESULT_JSON = "result.json"
RESULT_CSV = "result.csv"
REPORT_MD = "report.md"
REPRODUCE_PY = "reproduce.py"

#: Writes chart images into the folder it is given; returns (title, file name) per image.
ChartWriter = Callable[[Path], Sequence[tuple[str, str]]]


class ReportError(ValueError):
    """A chart writer returned something the report cannot link to."""


@dataclass(frozen=True)
class Report:
    """What write_report wrote: the folder, every file in it, and the charts linked."""

    directory: Path
    files: tuple[Path, ...]
    charts: tuple[tuple[str, str], ...]

    @property
    def markdown(self) -> Path:
        return self.directory / REPORT_MD


def write_report(
    result: ExperimentResult,
    directory: str | os.PathLike[str],
    chart_writer: ChartWriter | None = None,
) -> Report:
    """Write result.json, result.csv, reproduce.py, the charts (if a writer is given), report.md
    into a temporary folder, then swap it in for `directory` in one step.

    report.md is written last so that it only links charts that exist.
    """
    staged = stage_report(result, directory, chart_writer)
    staged.publish()
    return staged.report


@dataclass
class StagedReport:
    """A report written aside (`build`, beside the folder a link points to), swapped in for it
    by `publish` or removed by `discard`: one of a run's outputs published together."""

    report: Report
    build: Path | None
    real: Path

    def publish(self) -> None:
        if self.build is not None:
            try:
                swap_in(self.build, self.real)
            except BaseException:
                self.discard()
                raise
            self.build = None

    def discard(self) -> None:
        if self.build is not None:
            shutil.rmtree(self.build, ignore_errors=True)
            self.build = None


def stage_report(
    result: ExperimentResult,
    directory: str | os.PathLike[str],
    chart_writer: ChartWriter | None = None,
) -> StagedReport:
    """The report's files in a temporary folder beside `directory` (or beside the folder a
    link there points to: the link stays a link), ready to be swapped in."""
    folder = Path(directory)
    check_report_folder(str(folder))
    real = resolve_link(folder)
    remove_stale_builds(real)
    build = Path(
        tempfile.mkdtemp(prefix=temp_prefix(real.name), suffix=TEMP_SUFFIX, dir=_parent(real))
    )
    try:
        names = [
            write_atomic(build / RESULT_JSON, result.to_json()).name,
            write_atomic(build / RESULT_CSV, result.to_csv()).name,
            write_atomic(build / REPRODUCE_PY, reproduce_script(result)).name,
        ]
        charts: list[tuple[str, str]] = []
        if chart_writer is not None:
            for title, filename in chart_writer(build):
                charts.append((str(title), _checked_chart(build, filename)))
                names.append(filename)
        names.append(write_atomic(build / REPORT_MD, report_markdown(result, charts)).name)
        os.chmod(build, 0o777 & ~_umask())
    except BaseException:
        shutil.rmtree(build, ignore_errors=True)
        raise
    report = Report(folder, tuple(folder / name for name in names), tuple(charts))
    return StagedReport(report, build, real)


def _parent(folder: Path) -> Path:
    return folder.absolute().parent


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def is_report_file(name: str) -> bool:
    """A file a report folder holds: ours by name, or a chart image."""
    return name in (RESULT_JSON, RESULT_CSV, REPORT_MD, REPRODUCE_PY) or name.endswith(
        (".png", ".svg")
    )


def check_report_folder(path: str) -> Path:
    """Raise UnwritablePath unless `path` can become a report folder: new, empty, or holding
    only a previous report (which is replaced whole). Anything else there is the user's."""
    folder = check_writable(path, "folder")
    if folder.is_dir():
        try:
            foreign = sorted(e.name for e in os.scandir(folder) if not is_report_file(e.name))
        except OSError as exc:
            raise UnwritablePath(f"cannot read the folder {path}: {exc.strerror or exc}") from None
        foreign = [n for n in foreign if not (n.startswith(".") and n.endswith(TEMP_SUFFIX))]
        if foreign:
            shown = ", ".join(foreign[:3]) + (", …" if len(foreign) > 3 else "")
            raise UnwritablePath(
                f"the folder {path} holds files that are not a report's ({shown}); "
                "give a new or empty folder"
            )
    return folder


def remove_stale_builds(folder: Path) -> None:
    """Temporary report folders a killed export left beside `folder` (their pid is gone)."""
    short = re.escape(temp_name(folder.name))
    pattern = re.compile(rf"^\.{short}\.(\d+)\.[A-Za-z0-9_.]+{re.escape(TEMP_SUFFIX)}$")
    with contextlib.suppress(OSError):
        for entry in os.scandir(_parent(folder)):
            match = pattern.match(entry.name)
            if match and entry.is_dir(follow_symlinks=False):
                pid = int(match.group(1))
                if pid != os.getpid() and not process_alive(pid):
                    shutil.rmtree(entry.path, ignore_errors=True)


_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2 RENAME_EXCHANGE); False where unavailable."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    done = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(done == 0)


def swap_in(build: Path, folder: Path) -> None:
    """Make `build` be `folder`: a rename when there is none yet, else an exchange (or, where
    the OS has none, a rename aside first); the old report is then removed."""
    if not folder.exists():
        os.rename(build, folder)
        return
    if _exchange(build, folder):
        shutil.rmtree(build, ignore_errors=True)  # `build` now holds the old report
        return
    aside = build.with_name(build.name.replace(TEMP_SUFFIX, ".old" + TEMP_SUFFIX))
    os.rename(folder, aside)
    try:
        os.rename(build, folder)
    except BaseException:
        os.rename(aside, folder)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def _checked_chart(folder: Path, filename: str) -> str:
    name = PurePosixPath(str(filename))
    if name.is_absolute() or ".." in name.parts or not name.parts:
        raise ReportError(f"chart file {filename!r} must be a file name inside the report folder")
    if not (folder / name).is_file():
        raise ReportError(f"chart file {filename!r} was not written")
    return str(name)


# ---- report.md ------------------------------------------------------------------------------
def _cell(value: object) -> str:
    """Text safe inside a Markdown table cell (one line, pipes escaped)."""
    return " ".join(str(value).split()).replace("|", "\\|")


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines


def report_markdown(result: ExperimentResult, charts: Sequence[tuple[str, str]] = ()) -> str:
    """The report as Markdown: verdict, config, machine, latency, dtypes, agreement, charts."""
    env = result.environment
    out = [
        "# Autocast Explorer report",
        "",
        f"Measured {_cell(result.created) or 'at an unknown time'} with torch "
        f"{_cell(env.torch_version)}; written by autocast-explorer {__version__}.",
        "",
        *_finding_markdown(result),
        f"**Verdict:** {_cell(verdict(result))}",
        "",
        *_experiment_markdown(result),
        *_machine_markdown(result),
        *_latency_markdown(result),
        *routes_markdown(result),
        *training_markdown(result),
        *_layers_markdown(result),
        *_agreement_markdown(result),
    ]
    if result.data is not None:
        out += ["", *accuracy_markdown(result.data, result.accuracy)]
    if charts:
        out += ["", "## Charts", ""]
        for title, filename in charts:
            out += [f"![{_cell(title)}]({filename})", ""]
    if result.warnings:
        out += ["", "## Warnings", ""] + [f"- {_cell(w)}" for w in result.warnings]
    out += [
        "",
        "## Files",
        "",
        f"- `{RESULT_JSON}`: the full result (schema `{SCHEMA}`); open it in the explorer or "
        "pass it to `autocast-explorer compare`.",
        f"- `{RESULT_CSV}`: the latency rows for a spreadsheet.",
        f"- `{REPRODUCE_PY}`: `python {REPRODUCE_PY}` rebuilds the same model and input with "
        "only torch installed and prints the dtypes, agreement and its own timings next to "
        "these.",
        "",
    ]
    return "\n".join(out)


def _experiment_markdown(result: ExperimentResult) -> list[str]:
    """The settings that decide the measurement, one table row each."""
    cfg = result.config
    if result.train is not None:
        work = [
            ("mode", f"training: {cfg.steps} steps, {cfg.optimizer}, lr {cfg.lr:g}"),
            ("FLOPs per training step", f"{result.flops:,}"),
        ]
    else:
        work = [("FLOPs per forward", f"{result.flops:,}")]
    return [
        "## Experiment",
        "",
        *_table(
            ("setting", "value"),
            [
                *model_rows(cfg),
                ("batch", cfg.batch),
                ("activation", cfg.activation),
                ("head", cfg.head),
                ("autocast dtype", cfg.dtype),
                *kept_rows(cfg),
                ("seed", cfg.seed),
                *([("input fed", input_words(result.input))] if result.input else []),
                ("input drawn", f"{cfg.input_distribution}, scale {cfg.input_scale:g}"),
                ("threads", cfg.threads if cfg.threads is not None else "torch default"),
                ("allclose tolerance", f"atol {cfg.atol:g}, rtol {cfg.rtol:g}"),
                ("measurement budget", f"{cfg.min_time:g} s per mode"),
                *work,
            ],
        ),
    ]


def _machine_markdown(result: ExperimentResult) -> list[str]:
    """The CPU, its low-precision support and the software that ran the measurement."""
    env = result.environment
    return [
        "",
        "## Machine",
        "",
        *_table(
            ("", ""),
            [
                ("CPU", env.cpu_model),
                ("low-precision flags", ", ".join(env.cpu_flags) or "none found"),
                ("hardware", hardware_clause(result)),
                ("torch CPU capability", env.cpu_capability),
                ("oneDNN (mkldnn)", "available" if env.mkldnn else "not available"),
                ("cores / threads used", f"{env.cores} / {env.threads}"),
                ("torch / Python", f"{env.torch_version} / {env.python}"),
                ("OS", env.os),
            ],
        ),
    ]


def _latency_markdown(result: ExperimentResult) -> list[str]:
    """Both modes' latency figures and the speedup (only float32 when autocast raised)."""
    rows = [
        (
            mode,
            dtype,
            f"{s.median_ms:.4f}",
            f"{s.p25_ms:.4f}–{s.p75_ms:.4f}",
            f"{s.iqr_ms:.4f}",
            f"{s.cold_ms:.4f}",
            f"{s.gflops(result.flops):.1f}",
            f"{s.samples}×{s.block_size} calls",
        )
        for mode, dtype, s in (
            ("plain", "float32", result.plain),
            ("autocast", result.config.dtype, result.autocast),
        )
        if s is not None
    ]
    return [
        "",
        "## Latency per forward"
        if result.train is None
        else "## Time per training step (forward + loss + backward + optimizer step)",
        "",
        *_table(
            ("mode", "dtype", "median ms", "p25–p75 ms", "IQR ms", "cold ms", "GFLOP/s", "blocks"),
            rows,
        ),
        "",
        f"{_speedup_sentence(result)} Both modes were timed in alternating blocks in one run."
        if result.autocast is not None
        else "Only float32 was timed: the autocast forward raised, so there is no autocast "
        "latency and no speedup.",
        "",
    ]


def _speedup_sentence(result: ExperimentResult) -> str:
    """The speedup the report states: the figure with its interval, a rough one as rough, and
    none for a run that cannot tell (the verdict above says why)."""
    call = result.speed_call
    if not call.graded:
        said = SPEED_CALL_WORDS.get(call.kind, call.kind)
        return f"Speedup: none stated, {said} (see the verdict)."
    if call.rough:
        return f"Speedup: **{call.figure_text()}** (rough: {call.rough})."
    return (
        f"Speedup ({speedup_basis(result.evidence)}): **{result.speedup:.3f}×**"
        f"{speed_interval_words(result)}."
    )


def _layers_markdown(result: ExperimentResult) -> list[str]:
    """Each layer's dtypes in and out, plain and under autocast, and the model's output dtype."""
    rows = [
        (
            layer.name,
            layer.kind,
            "×".join(map(str, layer.out_shape)),
            f"{layer.plain.in_dtype} → {layer.plain.out_dtype}",
            f"{layer.autocast.in_dtype} → {layer.autocast.out_dtype}{kept_mark(layer)}"
            if layer.autocast is not None
            else "did not run (the forward raised)",
        )
        for layer in result.layers
    ]
    return [
        "## Dtype per layer" if result.train is None else "## Dtype per layer (training forward)",
        "",
        *_table(("layer", "kind", "output shape", "plain in → out", "autocast in → out"), rows),
        "",
        f"Model output: {_cell(result.output_dtype_plain)} without autocast, "
        + (
            f"{_cell(result.output_dtype_autocast)} under autocast."
            if result.output_dtype_autocast
            else "none under autocast (it raised)."
        ),
        "",
    ]


def _agreement_markdown(result: ExperimentResult) -> list[str]:
    """How far the autocast output moved from float32's: argmax, allclose, differences."""
    a = result.agreement
    if a is None:
        return [
            "## Agreement",
            "",
            "No agreement was measured: the autocast forward raised, so there is no "
            "autocast output to compare with float32.",
        ]
    return [
        "## Agreement",
        "",
        f"- no argmax: {a.no_argmax_reason}"
        if a.no_argmax_reason
        else f"- predictions (argmax) agree on {a.agree}/{a.rows} rows ({a.fraction:.1%})",
        f"- allclose(atol={a.atol:g}, rtol={a.rtol:g}): {a.allclose}",
        f"- max |plain − autocast| {a.max_abs_diff:.4g}, mean {a.mean_abs_diff:.4g}, "
        f"cosine similarity {a.cosine:.6f}",
    ]


def kept_rows(config: ExperimentConfig) -> list[tuple[str, object]]:
    """The layers kept in float32, when any: what `reproduce.py` keeps too."""
    if not config.keep_float32:
        return []
    kept = ", ".join(f"`{pattern}`" for pattern in config.keep_float32)
    return [("kept in float32", f"{kept} (autocast off inside, inputs float32)")]


def model_rows(config: ExperimentConfig) -> list[tuple[str, object]]:
    """The model's rows of the Experiment table: an MLP's widths, another family's parameters."""
    if config.model == "mlp":
        return [("model", "MLP"), ("layer widths", ", ".join(map(str, config.widths)))]
    rows: list[tuple[str, object]] = [("model", family(config).title)]
    for param in family(config).params:
        value = getattr(config, param.name)
        if param.kind == "ints":
            value = ", ".join(map(str, value))
        rows.append((param.name.replace("_", " "), value))
    return rows


def routes_markdown(result: ExperimentResult) -> list[str]:
    """The routes table (run --routes): each route's two sides, compile time, error, finding."""
    if not result.routes:
        return []

    rows = [
        (*route_cells(route, result.route_call(route)), route.finding or "")
        for route in result.routes
    ]
    out = [
        "## Routes",
        "",
        "Each route timed float32 against its lower precision (median ms per forward); error "
        "and argmax agreement compare its lower side with eager float32.",
        "",
    ]
    out += _table(
        (
            "route",
            "float32 ms",
            "lower ms",
            "speedup",
            "lower computes",
            "output",
            "compile",
            "SQNR",
            "argmax agree",
            "finding",
        ),
        rows,
    )
    return [*out, ""]


def _finding_markdown(result: ExperimentResult) -> list[str]:
    """A run whose autocast forward raised leads with that: it is the finding; so does a
    layer autocast silently left in float32."""
    headline, meaning = autocast_error_finding(result)
    if not headline:
        return [
            line
            for fallback in silent_fallbacks(result)
            for line in (f"## Finding: {_cell(fallback.headline)}", "", _cell(fallback.meaning), "")
        ]
    return [
        f"## Finding: {_cell(headline)}",
        "",
        f"torch said: `{_cell(result.autocast_error).replace('`', chr(39))}`",
        "",
        f"{_cell(meaning)} The charts show float32 only; the layer table marks the layers the "
        "autocast forward never reached.",
        "",
    ]


def training_markdown(result: ExperimentResult) -> list[str]:
    """The Training section: losses, accuracy, dtypes, saved bytes, phases, scaler."""
    train = result.train
    if train is None:
        return []
    low = result.config.dtype
    out = ["## Training", ""]
    rows = []
    for mode, dtype in (("plain", "float32"), ("autocast", low)):
        loss = train.loss[mode]
        phases = train.phases.get(mode)
        held_out = train.held_out_loss.get(mode)
        rows.append(
            (
                mode,
                dtype,
                f"{loss[0]:.4f} → {loss[-1]:.4f}",
                f"{train.accuracy[mode]:.1%}"
                if train.has_accuracy
                else (f"MSE {held_out:.4g}" if held_out is not None else "—"),
                train.loss_dtype.get(mode, "?"),
                f"{train.saved_bytes.get(mode, 0):,} ({train.saved_tensors.get(mode, 0)} tensors)",
                f"{phases.forward_ms:.3f} / {phases.backward_ms:.3f} / {phases.optimizer_ms:.3f}"
                if phases
                else "—",
            )
        )
    out += _table(
        (
            "mode",
            "dtype",
            f"{train.loss_name} loss first → last",
            "held-out accuracy" if train.has_accuracy else "held-out loss",
            "loss dtype",
            "bytes saved for backward",
            "forward / backward / optimizer ms",
        ),
        rows,
    )
    grads = ", ".join(f"{_cell(k)}: {_cell(v)}" for k, v in train.grad_dtypes.items())
    sc = train.scaler
    scaler = (
        f"GradScaler used: scale {sc.init_scale:g} → {sc.final_scale:g}, "
        f"{sc.skipped_steps} skipped steps."
        if sc.used
        else "No GradScaler."
    )
    out += [
        "",
        f"Both copies started from the same weights and saw the same {train.steps} batches. "
        f"Gradient dtypes under autocast: {grads}. {scaler} Gradient elements zero under "
        f"autocast but not in float32 on the first step: {sc.underflowed_grads:,} of "
        f"{sc.grad_elements:,}. Held-out set: {train.held_out_rows} rows.",
        "",
    ]
    if not train.has_accuracy:
        out += [f"No accuracy: {train.no_accuracy_reason()}.", ""]
    if train.divergence():
        out += [f"**{train.divergence()}**", ""]
    return out

"""A shareable report folder for one result: JSON, CSV, Markdown, charts, and reproduce.py.

`reproduce.py` lets someone without the explorer check the finding with nothing but torch: it
rebuilds the same model of any family and its input (same seed, same construction order and
input shape as core/experiment/families/) and prints the dtypes, agreement and its own timings
beside the original figures (for a training run: it trains both copies again and prints
losses, dtypes and saved bytes). A result whose autocast forward raised is reported too, with
that as its finding; its script checks whether the autocast forward raises again. Values from
the config and environment enter the script only as one JSON string literal written with
repr(), so no text in a (possibly foreign) result can become code.

The folder is built whole in a temporary folder beside it and then swapped in, so a report is
never half old, half new, and an interrupted export leaves the previous report (or nothing).
A folder that holds anything but a report's files is refused, never swapped away.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

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
from autocast_explorer.core.experiment import training
from autocast_explorer.core.experiment.capture import LayerDtypes
from autocast_explorer.core.experiment.certainty import speedup_basis
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.fallback import silent_fallbacks
from autocast_explorer.core.experiment.families import family
from autocast_explorer.core.experiment.result import SCHEMA, ExperimentResult
from autocast_explorer.core.experiment.route_summary import route_cells
from autocast_explorer.core.experiment.summary import (
    autocast_error_finding,
    hardware_clause,
    speed_interval_words,
    verdict,
)

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
    return done == 0


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
    cfg, env, a = result.config, result.environment, result.agreement
    out = [
        "# Autocast Explorer report",
        "",
        f"Measured {_cell(result.created) or 'at an unknown time'} with torch "
        f"{_cell(env.torch_version)}; written by autocast-explorer {__version__}.",
        "",
        *_finding_markdown(result),
        f"**Verdict:** {_cell(verdict(result))}",
        "",
        "## Experiment",
        "",
    ]
    out += _table(
        ("setting", "value"),
        [
            *model_rows(cfg),
            ("batch", cfg.batch),
            ("activation", cfg.activation),
            ("head", cfg.head),
            ("autocast dtype", cfg.dtype),
            ("seed", cfg.seed),
            ("input", f"{cfg.input_distribution}, scale {cfg.input_scale:g}"),
            ("threads", cfg.threads if cfg.threads is not None else "torch default"),
            ("allclose tolerance", f"atol {cfg.atol:g}, rtol {cfg.rtol:g}"),
            ("measurement budget", f"{cfg.min_time:g} s per mode"),
            *(
                [
                    ("mode", f"training: {cfg.steps} steps, {cfg.optimizer}, lr {cfg.lr:g}"),
                    ("FLOPs per training step", f"{result.flops:,}"),
                ]
                if result.train is not None
                else [("FLOPs per forward", f"{result.flops:,}")]
            ),
        ],
    )
    out += ["", "## Machine", ""]
    out += _table(
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
    )
    out += [
        "",
        "## Latency per forward"
        if result.train is None
        else "## Time per training step (forward + loss + backward + optimizer step)",
        "",
    ]
    out += _table(
        ("mode", "dtype", "median ms", "p25–p75 ms", "IQR ms", "cold ms", "GFLOP/s", "blocks"),
        [
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
                ("autocast", cfg.dtype, result.autocast),
            )
            if s is not None
        ],
    )
    out += [
        "",
        f"Speedup ({speedup_basis(result.evidence)}): **{result.speedup:.3f}×**"
        f"{speed_interval_words(result)}. Both modes were timed in alternating blocks in one run."
        if result.autocast is not None
        else "Only float32 was timed: the autocast forward raised, so there is no autocast "
        "latency and no speedup.",
        "",
        *routes_markdown(result),
        *training_markdown(result),
        "## Dtype per layer" if result.train is None else "## Dtype per layer (training forward)",
        "",
    ]
    out += _table(
        ("layer", "kind", "output shape", "plain in → out", "autocast in → out"),
        [
            (
                layer.name,
                layer.kind,
                "×".join(map(str, layer.out_shape)),
                f"{layer.plain.in_dtype} → {layer.plain.out_dtype}",
                f"{layer.autocast.in_dtype} → {layer.autocast.out_dtype}"
                if layer.autocast is not None
                else "did not run (the forward raised)",
            )
            for layer in result.layers
        ],
    )
    out += [
        "",
        f"Model output: {_cell(result.output_dtype_plain)} without autocast, "
        + (
            f"{_cell(result.output_dtype_autocast)} under autocast."
            if result.output_dtype_autocast
            else "none under autocast (it raised)."
        ),
        "",
        "## Agreement",
        "",
    ]
    if a is None:
        out += [
            "No agreement was measured: the autocast forward raised, so there is no "
            "autocast output to compare with float32."
        ]
    else:
        out += [
            f"- no argmax: {a.no_argmax_reason}"
            if a.no_argmax_reason
            else f"- predictions (argmax) agree on {a.agree}/{a.rows} rows ({a.fraction:.1%})",
            f"- allclose(atol={a.atol:g}, rtol={a.rtol:g}): {a.allclose}",
            f"- max |plain − autocast| {a.max_abs_diff:.4g}, mean {a.mean_abs_diff:.4g}, "
            f"cosine similarity {a.cosine:.6f}",
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

    rows = [(*route_cells(route), route.finding or "") for route in result.routes]
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


# ---- reproduce.py ---------------------------------------------------------------------------


def _hooked_dtypes(dtypes: LayerDtypes | None) -> dict[str, Any] | None:
    """What reproduce.py's forward hooks see of a layer (its input and output dtypes): the op
    trace's compute dtypes and casts are not rebuilt by the script, so they are not compared."""
    if dtypes is None:
        return None
    return {k: v for k, v in dtypes.to_dict().items() if k not in ("compute_dtypes", "casts")}


def _original(result: ExperimentResult) -> dict[str, object]:
    a = result.agreement
    train = result.train
    if train is not None:
        return {
            "machine": result.environment.label(),
            "created": result.created,
            "train": {
                "loss_kind": train.loss_kind,
                "loss": {m: list(v) for m, v in train.loss.items()},
                "accuracy": dict(train.accuracy),
                "held_out_loss": dict(train.held_out_loss),
                "loss_dtype": dict(train.loss_dtype),
                "grad_dtypes": dict(train.grad_dtypes),
                "saved_bytes": dict(train.saved_bytes),
            },
            "median_ms": {"plain": result.plain.median_ms, "autocast": result.autocast.median_ms},
        }
    return {
        "machine": result.environment.label(),
        "created": result.created,
        "output_dtype": {
            "plain": result.output_dtype_plain,
            "autocast": result.output_dtype_autocast,
        },
        "layers": [
            {
                "name": layer.name,
                "plain": _hooked_dtypes(layer.plain),
                "autocast": _hooked_dtypes(layer.autocast),
            }
            for layer in result.layers
        ],
        "agreement": (
            {
                "agree": a.agree,
                "rows": a.rows,
                "allclose": a.allclose,
                "max_abs_diff": a.max_abs_diff,
            }
            if a is not None
            else None
        ),
        "autocast_error": result.autocast_error,
        "median_ms": {
            "plain": result.plain.median_ms,
            "autocast": result.autocast.median_ms if result.autocast is not None else None,
        },
    }


def reproduce_script(result: ExperimentResult) -> str:
    """The standalone script for `result` (config and original figures as JSON literals)."""
    config_json = json.dumps(result.config.to_dict(), sort_keys=True)
    original_json = json.dumps(_original(result), sort_keys=True)
    values = {
        "__VERSION__": __version__,
        "__CONFIG_JSON__": repr(config_json),
        "__ORIGINAL_JSON__": repr(original_json),
        "__TASK_SEED_OFFSET__": repr(training.TASK_SEED_OFFSET),
        "__TRAIN_POOL_BATCHES__": repr(training.TRAIN_POOL_BATCHES),
        "__HELD_OUT_BATCHES__": repr(training.HELD_OUT_BATCHES),
        "__CENTROID_NORM__": repr(training.CENTROID_NORM),
        "__INIT_SCALE__": repr(training.INIT_SCALE),
        "__USER_MODEL_BUILD__": USER_MODEL_BUILD if result.config.is_user_model else "",
        "__USER_MODEL_TASK__": USER_MODEL_TASK if result.config.is_user_model else "",
    }
    # One pass, so text inside an inserted value is never itself substituted.
    return re.sub(r"__[A-Z_]+__", lambda m: values.get(m.group(0), m.group(0)), _TEMPLATE)


#: A user model's build() (a spec such as hf:bert or my_model.py:build): the explorer's own
#: loader builds it from the same spec, so that script needs autocast-explorer installed (and
#: the model's file where the spec says); a family's script needs torch alone.
USER_MODEL_BUILD = """\
    # Your own model: built from the same spec by the explorer's own loader (so this script
    # needs autocast-explorer installed, and the model's file where the spec says).
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.experiment.model import build as build_config

    return build_config(ExperimentConfig.from_dict(CONFIG))"""

#: A user model's training task, from the explorer's own code: its loss plan probes the model
#: (batch × classes logits: seeded labels for cross-entropy; anything else: one fixed seeded
#: target of the output's shape for MSE), so the script trains with the same loss.
USER_MODEL_TASK = """\
    # Your own model: the explorer's own task and loss kind (classifier logits: cross-entropy
    # against seeded labels; any other output: MSE to one fixed seeded target of its shape).
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.experiment.training import make_task as explorer_task

    task = explorer_task(ExperimentConfig.from_dict(CONFIG))
    return list(task.batches), list(task.held_out), task.loss_kind"""

_TEMPLATE = '''\
#!/usr/bin/env python3
"""Reproduce one Autocast Explorer measurement with nothing but torch installed.

Written by autocast-explorer __VERSION__. Rebuilds the same model and input (same seed, same
construction order), runs one forward in float32 and one under torch.autocast("cpu"), and
prints the dtypes, the prediction agreement and this machine's own timings, beside the figures
the explorer measured. Run: python reproduce.py [--min-time SECONDS] [--json]
"""

import argparse
import collections
import copy
import itertools
import json
import statistics
import time

import torch

CONFIG = json.loads(__CONFIG_JSON__)
ORIGINAL = json.loads(__ORIGINAL_JSON__)

ACTIVATIONS = {
    "relu": torch.nn.ReLU,
    "gelu": torch.nn.GELU,
    "tanh": torch.nn.Tanh,
    "sigmoid": torch.nn.Sigmoid,
}
LOW_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16}


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


MODEL = CONFIG.get("model", "mlp")


class MeanOverTokens(torch.nn.Module):
    """(batch, seq, d_model) -> (batch, d_model)."""

    def forward(self, x):
        return x.mean(dim=1)


class LastStep(torch.nn.Module):
    """An LSTM/GRU's (output, state) -> the top layer's last hidden state."""

    def forward(self, recurrent):
        return recurrent[0][:, -1]


def activation(index):
    factory = ACTIVATIONS.get(CONFIG["activation"])
    return factory() if factory is not None else None


def add_head(layers):
    if CONFIG.get("head") == "softmax":
        layers["softmax"] = torch.nn.Softmax(dim=1)
    elif CONFIG.get("head") == "log_softmax":
        layers["log_softmax"] = torch.nn.LogSoftmax(dim=1)


def mlp_layers(layers):
    pairs = list(zip(CONFIG["widths"], CONFIG["widths"][1:]))
    for index, (fan_in, fan_out) in enumerate(pairs, start=1):
        layers["fc%d" % index] = torch.nn.Linear(fan_in, fan_out)
        act = activation(index)
        if index < len(pairs) and act is not None:
            layers["%s%d" % (CONFIG["activation"], index)] = act


def cnn_layers(layers):
    channels = CONFIG["channels"]
    for index, (c_in, c_out) in enumerate(zip(channels, channels[1:]), start=1):
        layers["conv%d" % index] = torch.nn.Conv2d(c_in, c_out, kernel_size=3, padding=1)
        layers["bn%d" % index] = torch.nn.BatchNorm2d(c_out)
        act = activation(index)
        if act is not None:
            layers["%s%d" % (CONFIG["activation"], index)] = act
        layers["pool%d" % index] = torch.nn.MaxPool2d(2)
    layers["gap"] = torch.nn.AdaptiveAvgPool2d(1)
    layers["flatten"] = torch.nn.Flatten()
    layers["fc"] = torch.nn.Linear(channels[-1], CONFIG["classes"])


def transformer_layers(layers):
    name = CONFIG["activation"]
    for index in range(1, CONFIG["depth"] + 1):
        if name in ("relu", "gelu"):
            act = name  # the fused fast path needs one of these two spelled as text
        else:
            act = activation(index) or torch.nn.Identity()
        layers["encoder%d" % index] = torch.nn.TransformerEncoderLayer(
            CONFIG["d_model"], CONFIG["heads"], dim_feedforward=CONFIG["ff"], dropout=0.0,
            activation=act, batch_first=True)
    layers["pool"] = MeanOverTokens()
    layers["fc"] = torch.nn.Linear(CONFIG["d_model"], CONFIG["classes"])


def rnn_layers(layers):
    cell = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[CONFIG["cell"]]
    layers[CONFIG["cell"]] = cell(CONFIG["features"], CONFIG["hidden"],
                                  num_layers=CONFIG["depth"], batch_first=True)
    layers["last"] = LastStep()
    layers["fc"] = torch.nn.Linear(CONFIG["hidden"], CONFIG["classes"])


FAMILY_LAYERS = {"mlp": mlp_layers, "cnn": cnn_layers, "transformer": transformer_layers,
                 "rnn": rnn_layers}


def input_shape():
    batch = CONFIG["batch"]
    if MODEL == "cnn":
        return (batch, CONFIG["channels"][0], CONFIG["image"], CONFIG["image"])
    if MODEL == "transformer":
        return (batch, CONFIG["seq"], CONFIG["d_model"])
    if MODEL == "rnn":
        return (batch, CONFIG["seq"], CONFIG["features"])
    return (batch, CONFIG["widths"][0])


def class_count():
    return CONFIG["widths"][-1] if MODEL == "mlp" else CONFIG["classes"]


def model_line():
    if ":" in MODEL:
        return MODEL
    if MODEL == "mlp":
        return "MLP widths %s" % ",".join(map(str, CONFIG["widths"]))
    if MODEL == "cnn":
        return "CNN channels %s, image %d" % (",".join(map(str, CONFIG["channels"])),
                                               CONFIG["image"])
    if MODEL == "transformer":
        return "Transformer d_model %d, %d heads, depth %d, ff %d, seq %d, fast path %s" % (
            CONFIG["d_model"], CONFIG["heads"], CONFIG["depth"], CONFIG["ff"], CONFIG["seq"],
            "on" if CONFIG["fast_path"] else "off")
    return "%s features %d, hidden %d, depth %d, seq %d" % (
        CONFIG["cell"].upper(), CONFIG["features"], CONFIG["hidden"], CONFIG["depth"],
        CONFIG["seq"])


def build():
    """Seed, the family's layers in order, optional head, the measured mode; then the input.

    A transformer with its fast path off is measured in train mode (dropout is 0)."""
__USER_MODEL_BUILD__
    torch.manual_seed(CONFIG["seed"])
    layers = collections.OrderedDict()
    FAMILY_LAYERS[MODEL](layers)
    add_head(layers)
    model = torch.nn.Sequential(layers)
    model.train(MODEL == "transformer" and not CONFIG["fast_path"])
    return model, draw_input()


def first_tensor(value):
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (tuple, list)):
        for item in value:
            found = first_tensor(item)
            if found is not None:
                return found
    return None


def forward(model, x, low):
    """One forward (autocast when `low` is a dtype) recording every module's in/out dtype.

    Each module's forward is wrapped, not hooked: torch's fused transformer kernel refuses to
    run with hooks attached. Returns (output or None, layers, error text or "")."""
    seen = []
    calls = itertools.count()
    wrapped = []

    def wrap(name, module):
        original = module.forward

        def record(*args, **kwargs):
            order = next(calls)
            output = original(*args, **kwargs)
            x_in, y = first_tensor(args), first_tensor(output)
            if x_in is not None and y is not None:
                seen.append((order, {"name": name, "in": dtype_name(x_in.dtype),
                                     "out": dtype_name(y.dtype)}))
            return output

        module.forward = record
        wrapped.append(module)

    for name, module in model.named_modules():
        if module is not model:
            wrap(name, module)
    out, error = None, ""
    try:
        with torch.no_grad():
            if low is None:
                out = model(x)
            else:
                with torch.autocast("cpu", dtype=low):
                    out = model(x)
    except Exception as exc:
        text = str(exc).strip().split("\\nException raised from")[0].strip()
        error = "%s: %s" % (type(exc).__name__, " ".join(text.split())[:300])
    finally:
        for module in wrapped:
            module.__dict__.pop("forward", None)
    return out, [layer for _, layer in sorted(seen, key=lambda item: item[0])], error


def pair(plain_layers, auto_layers):
    """Join the modes layer by layer by name and call order (None: autocast never got there)."""
    by_key, count = {}, collections.Counter()
    for layer in auto_layers:
        by_key[(layer["name"], count[layer["name"]])] = layer
        count[layer["name"]] += 1
    count.clear()
    out = []
    for p in plain_layers:
        a = by_key.get((p["name"], count[p["name"]]))
        count[p["name"]] += 1
        out.append({"name": p["name"], "plain": {"in": p["in"], "out": p["out"]},
                    "autocast": {"in": a["in"], "out": a["out"]} if a else None})
    return out


def timings(model, x, low, min_time):
    """Median ms per forward of each mode, timed in alternating blocks (ABAB)."""

    def plain():
        with torch.no_grad():
            model(x)

    def auto():
        with torch.no_grad(), torch.autocast("cpu", dtype=low):
            model(x)

    modes = [plain, auto] if low is not None else [plain]
    sizes = []
    for fn in modes:
        for _ in range(3):
            start = time.perf_counter()
            fn()
            once = time.perf_counter() - start
        sizes.append(max(1, int(max(min_time / 20, 0.001) / max(once, 1e-7)) + 1))
    samples = [[] for _ in modes]
    spent = [0.0 for _ in modes]
    while min(spent) < min_time or min(len(s) for s in samples) < 5:
        for i, fn in enumerate(modes):
            start = time.perf_counter()
            for _ in range(sizes[i]):
                fn()
            elapsed = time.perf_counter() - start
            spent[i] += elapsed
            samples[i].append(elapsed * 1e3 / sizes[i])
    return tuple(statistics.median(s) for s in samples)


TASK_SEED_OFFSET = __TASK_SEED_OFFSET__
TRAIN_POOL_BATCHES = __TRAIN_POOL_BATCHES__
HELD_OUT_BATCHES = __HELD_OUT_BATCHES__
CENTROID_NORM = __CENTROID_NORM__
INIT_SCALE = __INIT_SCALE__


def draw_input():
    shape = input_shape()
    if CONFIG["input_distribution"] == "uniform":
        x = torch.rand(shape) * 2.0 - 1.0
    else:
        x = torch.randn(shape)
    if CONFIG["input_scale"] != 1.0:
        x = x * CONFIG["input_scale"]
    return x


def make_task():
    """The explorer's synthetic task: seeded class centres plus the input noise; returns the
    training batches, the held-out batches and the loss kind (cross_entropy or mse)."""
__USER_MODEL_TASK__
    torch.manual_seed(CONFIG["seed"] + TASK_SEED_OFFSET)
    classes = class_count()
    probe = draw_input()
    noise = float(probe.float().std()) or 1.0
    spread = CENTROID_NORM * noise / probe[0].numel() ** 0.5
    centres = torch.randn((classes, *probe[0].shape)) * spread

    def draw():
        x = draw_input()
        y = torch.randint(0, classes, (x.shape[0],))
        return x + centres[y].to(x.dtype), y

    batches = [draw() for _ in range(TRAIN_POOL_BATCHES)]
    held_out = [draw() for _ in range(HELD_OUT_BATCHES)]
    return batches, held_out, "cross_entropy"


def loss_fn(output, y, kind):
    if kind == "mse":  # a model without classifier logits: MSE to the fixed target
        return torch.nn.functional.mse_loss(output, y)
    if CONFIG["head"] == "log_softmax":
        return torch.nn.functional.nll_loss(output, y)
    if CONFIG["head"] == "softmax":
        return torch.nn.functional.nll_loss(torch.log(output.clamp_min(1e-12)), y)
    return torch.nn.functional.cross_entropy(output, y)


def train(min_time):
    """Train a float32 and an autocast copy side by side, as the explorer did."""
    low = LOW_DTYPES[CONFIG["dtype"]]
    initial, _ = build()
    batches, held_out, kind = make_task()
    found = {"loss_kind": kind, "loss_dtype": {}, "grad_dtypes": {}, "saved_bytes": {}}
    x0, y0 = batches[0]
    for mode, dtype in (("plain", None), ("autocast", low)):
        model = copy.deepcopy(initial).train()
        saved = [0]

        def pack(t):
            saved[0] += t.numel() * t.element_size()
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            with torch.autocast("cpu", dtype=low, enabled=dtype is not None):
                loss = loss_fn(model(x0), y0, kind)
        loss.backward()
        found["loss_dtype"][mode] = dtype_name(loss.dtype)
        found["saved_bytes"][mode] = saved[0]
        if dtype is not None:
            found["grad_dtypes"] = {  # a parameter the loss does not reach has no gradient
                n: dtype_name(p.grad.dtype)
                for n, p in model.named_parameters()
                if p.grad is not None
            }
    models, optimizers, scalers = {}, {}, {}
    for mode in ("plain", "autocast"):
        models[mode] = copy.deepcopy(initial).train()
        params = models[mode].parameters()
        if CONFIG["optimizer"] == "adamw":
            optimizers[mode] = torch.optim.AdamW(params, lr=CONFIG["lr"])
        else:
            optimizers[mode] = torch.optim.SGD(params, lr=CONFIG["lr"], momentum=0.9)
        use = mode == "autocast" and CONFIG["dtype"] == "float16" and CONFIG["scaler"]
        scalers[mode] = torch.amp.GradScaler("cpu", init_scale=INIT_SCALE) if use else None

    def step(mode, index):
        model, opt, scaler = models[mode], optimizers[mode], scalers[mode]
        x, y = batches[index % len(batches)]
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=low, enabled=mode == "autocast"):
            loss = loss_fn(model(x), y, kind)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
        return float(loss.detach())

    losses = {"plain": [], "autocast": []}
    for index in range(CONFIG["steps"]):
        for mode in ("plain", "autocast"):
            losses[mode].append(step(mode, index))
    accuracy, held_out_loss = {}, {}
    for mode in ("plain", "autocast"):
        model = models[mode].eval()
        with torch.no_grad(), torch.autocast("cpu", dtype=low, enabled=mode == "autocast"):
            outputs = torch.cat([model(x).float() for x, _ in held_out])
        targets = torch.cat([y for _, y in held_out])
        with torch.no_grad():
            held_out_loss[mode] = float(loss_fn(outputs, targets, kind))
        if kind == "cross_entropy":  # an MSE task has no classes to be right about
            right = int((outputs.argmax(1) == targets).sum())
            accuracy[mode] = right / int(targets.shape[0])
        model.train()
    medians = {"plain": [], "autocast": []}
    counter = [CONFIG["steps"]]
    while min(sum(v) for v in medians.values()) < min_time * 1e3 or min(
        len(v) for v in medians.values()
    ) < 5:
        for mode in ("plain", "autocast"):
            start = time.perf_counter()
            step(mode, counter[0])
            medians[mode].append((time.perf_counter() - start) * 1e3)
        counter[0] += 1
    found["loss"] = losses
    found["accuracy"] = accuracy
    found["held_out_loss"] = held_out_loss
    found["median_ms"] = {m: statistics.median(v) for m, v in medians.items()}
    return found


def main_train(args):
    found = train(args.min_time)
    original = ORIGINAL["train"]
    same = {
        key: found[key] == original[key]
        for key in ("loss_kind", "loss_dtype", "grad_dtypes", "saved_bytes")
    }
    same["first loss"] = all(
        abs(found["loss"][m][0] - original["loss"][m][0]) <= 1e-4 * abs(original["loss"][m][0])
        for m in ("plain", "autocast")
    )
    if args.json:
        print(json.dumps({"config": CONFIG, "found": found, "original": ORIGINAL,
                          "same": same}, indent=2))
        return
    kind = found["loss_kind"]
    print("Training: %s, batch %d, %d steps, %s lr %g, %s loss; autocast dtype %s" % (
        model_line(), CONFIG["batch"], CONFIG["steps"], CONFIG["optimizer"], CONFIG["lr"],
        {"mse": "MSE"}.get(kind, "cross-entropy"), CONFIG["dtype"]))
    for mode in ("plain", "autocast"):
        loss = found["loss"][mode]
        if kind == "cross_entropy":
            score = "accuracy %.1f%%" % (100 * found["accuracy"][mode])
        else:
            score = "held-out MSE %.4g" % found["held_out_loss"][mode]
        print("  %-9s loss %.4f -> %.4f  %s  loss dtype %s  saved %d bytes" % (
            mode, loss[0], loss[-1], score, found["loss_dtype"][mode],
            found["saved_bytes"][mode]))
    if kind == "mse":
        print("no accuracy: the output is not batch x classes logits, so both copies trained "
              "with MSE to one fixed random target")
    print("gradient dtypes under autocast: %s" % ", ".join(sorted(set(
        found["grad_dtypes"].values()))))
    print("median per training step: plain %.4f ms, autocast %.4f ms" % (
        found["median_ms"]["plain"], found["median_ms"]["autocast"]))
    print("explorer measured on %s: plain %.4f ms, autocast %.4f ms" % (
        ORIGINAL["machine"], ORIGINAL["median_ms"]["plain"], ORIGINAL["median_ms"]["autocast"]))
    for key, ok in same.items():
        print("same %s as the explorer's run: %s" % (key.replace("_", " "), "yes" if ok else "NO"))


def main():
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--min-time", type=float, default=CONFIG["min_time"],
                        help="seconds of timed forwards per mode")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead")
    args = parser.parse_args()
    if CONFIG["threads"] is not None:
        torch.set_num_threads(CONFIG["threads"])
    if CONFIG.get("mode") == "train":
        main_train(args)
        return
    low = LOW_DTYPES[CONFIG["dtype"]]
    model, x = build()
    plain, plain_layers, _ = forward(model, x, None)
    auto, auto_layers, error = forward(model, x, low)
    found = {
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "output_dtype": {"plain": dtype_name(plain.dtype),
                         "autocast": dtype_name(auto.dtype) if auto is not None else ""},
        "layers": pair(plain_layers, auto_layers),
        "agreement": None,
        "autocast_error": error,
    }
    if ":" in MODEL:  # your own model: the rows the explorer grouped by module depth
        kept = [layer["name"] for layer in ORIGINAL["layers"]]
        found["layers"] = [layer for layer in found["layers"] if layer["name"] in kept]
    if auto is not None:
        reference, lowered = plain.float(), auto.float()
        logits = reference.dim() == 2 and reference.shape[1] >= 2  # batch × classes
        rows = reference.shape[0] if logits else 0  # no argmax without logits
        agree = int((reference.argmax(dim=1) == lowered.argmax(dim=1)).sum()) if rows else 0
        diff = (reference - lowered).abs()
        allclose = bool(torch.allclose(reference, lowered, atol=CONFIG["atol"],
                                       rtol=CONFIG["rtol"]))
        found["agreement"] = {"agree": agree, "rows": rows, "allclose": allclose,
                              "max_abs_diff": float(diff.max())}
        plain_ms, auto_ms = timings(model, x, low, args.min_time)
    else:
        plain_ms, auto_ms = timings(model, x, None, args.min_time)[0], None
    found["median_ms"] = {"plain": plain_ms, "autocast": auto_ms}
    same = {key: found[key] == ORIGINAL[key] for key in ("output_dtype", "layers")}
    if found["agreement"] is None or ORIGINAL["agreement"] is None:
        same["agreement"] = found["agreement"] is None and ORIGINAL["agreement"] is None
    else:
        same["agreement"] = all(found["agreement"][k] == ORIGINAL["agreement"][k]
                                for k in ("agree", "rows", "allclose"))
    if error or ORIGINAL.get("autocast_error"):
        same["autocast_error"] = bool(error) == bool(ORIGINAL.get("autocast_error"))
    if args.json:
        print(json.dumps({"config": CONFIG, "found": found, "original": ORIGINAL,
                          "same": same}, indent=2))
        return
    print("Model: %s, batch %d, %s, head %s, seed %d; autocast dtype %s" % (
        model_line(), CONFIG["batch"], CONFIG["activation"], CONFIG["head"], CONFIG["seed"],
        CONFIG["dtype"]))
    print("torch %s, threads: %d" % (found["torch"], found["threads"]))
    if error:
        print("the autocast forward RAISED: %s" % error)
    if ORIGINAL.get("autocast_error"):
        print("the explorer's autocast forward raised: %s" % ORIGINAL["autocast_error"])
    print("output dtype: plain %s, autocast %s" % (
        found["output_dtype"]["plain"], found["output_dtype"]["autocast"] or "(raised)"))
    for layer in found["layers"]:
        a = layer["autocast"]
        print("  %-12s plain %s -> %s   autocast %s" % (
            layer["name"], layer["plain"]["in"], layer["plain"]["out"],
            "%s -> %s" % (a["in"], a["out"]) if a else "did not run"))
    a = found["agreement"]
    if a is not None:
        if a["rows"]:
            print("predictions agree: %d/%d" % (a["agree"], a["rows"]))
        else:
            print("no argmax: the output is not batch x classes logits")
        print("allclose(atol=%g, rtol=%g): %s" % (CONFIG["atol"], CONFIG["rtol"],
                                                  a["allclose"]))
        print("max abs diff: %.6g" % a["max_abs_diff"])
        print("median per forward: plain %.4f ms, autocast %.4f ms, speedup %.3fx" % (
            plain_ms, auto_ms, plain_ms / auto_ms))
    else:
        print("median per forward: plain %.4f ms (autocast not timed: it raised)" % plain_ms)
    theirs = ORIGINAL["median_ms"]
    print("explorer measured on %s: plain %.4f ms, autocast %s" % (
        ORIGINAL["machine"], theirs["plain"],
        "%.4f ms" % theirs["autocast"] if theirs["autocast"] is not None else "(raised)"))
    for key, ok in same.items():
        print("same %s as the explorer's run: %s" % (key.replace("_", " "), "yes" if ok else "NO"))


if __name__ == "__main__":
    main()
'''

"""`autocast-explorer run`: one config, float32 vs autocast, as a summary, JSON, CSV or report."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from autocast_explorer.cli.common import (
    StderrProgress,
    UsageError,
    add_config_arguments,
    add_data_arguments,
    add_training_arguments,
    check_outputs,
    config_from_args,
    preset_from_args,
    publish_outputs,
    raise_problems,
    resource_errors,
    result_files,
    to_stdout,
)
from autocast_explorer.cli.signals import deferred
from autocast_explorer.cli.user_code import running_user_code

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.reports.report import StagedReport


RUN_EPILOG = """\
Without --json - or --csv - the summary goes to stdout; progress goes to stderr when it is a
terminal. Bad input exits 2 with one `error:` line; Ctrl-C exits 130.

examples:
  autocast-explorer run
  autocast-explorer run --preset tutorial
  autocast-explorer run --preset large-mlp --batch 64 --threads 1
  autocast-explorer run --preset my-preset.json --dtype float16
  autocast-explorer run --widths 1024,1024,10 --batch 512 --dtype float16 --threads 1
  autocast-explorer run --json result.json --csv latency.csv
  autocast-explorer run --json - | jq .latency.verdict   # {call, direction, factor, reasons}
  autocast-explorer run --report out/ && python out/reproduce.py
  autocast-explorer run --data digits                  # trained MLP: do the answers change?
  autocast-explorer run --data digits --model cnn --dtype float16
  autocast-explorer run --data mine.npz --checkpoint weights.safetensors --widths 64,128,10
  autocast-explorer run --mode train --steps 100 --optimizer adamw
  autocast-explorer run --mode train --dtype float16 --no-scaler
  autocast-explorer run --model hf:bert --keep-float32 'encoder.layer.*.attention'
  autocast-explorer run --model cnn --keep-float32 Conv2d --routes eager,compiled
"""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The `run` subcommand and its flags."""
    run = sub.add_parser(
        "run",
        help="measure one config plain vs autocast and print a summary",
        description="Run the same forward pass in float32 and under torch.autocast('cpu') and "
        "report latency, the dtype each layer ran in and whether the predictions agree.",
        epilog=RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_config_arguments(run)
    add_data_arguments(run)
    add_training_arguments(run)
    out = run.add_argument_group("output")
    out.add_argument("--json", metavar="PATH|-", help="write the result JSON ('-': stdout only)")
    out.add_argument("--csv", metavar="PATH|-", help="write the latency rows as CSV")
    out.add_argument(
        "--report",
        metavar="DIR",
        help="write result.json, result.csv, report.md, reproduce.py and the charts (PNG) into DIR",
    )
    run.add_argument(
        "--placements",
        action="store_true",
        help="also time per-call, hoisted and pre-cast autocast side by side and count the "
        "casts each makes (adds a 'placements' section to the JSON)",
    )
    run.set_defaults(handler=cmd_run)
    return run


def cmd_run(args: argparse.Namespace) -> int:
    preset = preset_from_args(args)
    config = config_from_args(args, preset.config if preset else None)
    check_outputs(args)
    from autocast_explorer.core.experiment.engine import run_experiment
    from autocast_explorer.core.experiment.summary import format_summary
    from autocast_explorer.core.sweeps.placements import (
        format_placements,
        from_result,
        run_with_placements,
    )

    placements = getattr(args, "placements", False)
    if placements and config.mode == "train":
        raise UsageError("--placements times forwards: use it with --mode infer")
    if placements and config.keep_float32:
        raise UsageError("--placements places autocast around the whole model: drop --keep-float32")
    if preset is not None and preset.sweep is not None:
        sys.stderr.write(
            f"note: preset {preset.name!r} also holds a {preset.sweep.label} sweep; "
            f"run it with: autocast-explorer sweep --preset {preset.id}\n"
        )
    run = run_with_placements if placements else run_experiment
    with StderrProgress() as progress, resource_errors(config), running_user_code(config):
        result = run(config, progress=progress, confirm=progress.announce)
    staged_reports: list[StagedReport] = []
    notes: list[str] = []

    def stage_report() -> StagedReport:
        staged, note = _stage_report(result, args.report)
        staged_reports.append(staged)
        notes.append(note)
        return staged

    stagers = [(args.report, stage_report)] if args.report else []
    problems = publish_outputs(
        result_files(args, result), result.to_json(), name=f"{result.KIND}.json", stagers=stagers
    )
    if not to_stdout(args.json, args.csv):
        print(format_summary(result))
        placed = from_result(result) if placements else None
        if placed is not None:
            print(f"\n{format_placements(placed)}")
        elif placements:
            print("\nNo placements timed: the autocast forward raised (see above).")
    if staged_reports and not problems:
        if notes[0]:
            sys.stderr.write(f"note: the report has no chart images: {notes[0]}\n")
        if not to_stdout(args.json, args.csv):
            report = staged_reports[0].report
            names = ", ".join(f.name for f in report.files)
            print(f"\nReport written to {report.directory}: {names}")
    raise_problems(problems)
    return 0


def _stage_report(result: ExperimentResult, directory: str) -> tuple[StagedReport, str]:
    """The report with chart PNGs drawn offscreen by the window's charts (gui.report_charts),
    written aside to be published with the other outputs.

    Imported lazily: `run` without --report never loads Qt. Without Qt the report is written
    without images and the reason is returned. Qt is loaded and drawn with signals deferred
    (cli.signals): Ctrl-C there takes effect when the drawing ends, and the half-built report
    is thrown away instead of swapped in.
    """
    with deferred():
        try:
            from autocast_explorer.gui.charts.report_charts import stage_report_with_charts
        except ImportError as exc:
            from autocast_explorer.core.reports.report import stage_report

            return stage_report(result, directory), f"Qt could not be loaded ({exc})"
    return stage_report_with_charts(result, directory, deferred=deferred)

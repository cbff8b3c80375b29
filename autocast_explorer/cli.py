"""Command line over the engine: `autocast-explorer run|…`; no subcommand opens the window.

Every bad input ends with exit code 2 and one `error: …` line on stderr; Ctrl-C exits 130.
Heavy imports (torch, Qt) happen inside the commands so `--help` stays fast.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, TextIO

from autocast_explorer import __version__
from autocast_explorer.core.config import (
    ACTIVATIONS,
    DTYPES,
    HEADS,
    INPUT_DISTRIBUTIONS,
    ConfigError,
    ExperimentConfig,
    parse_widths,
)

if TYPE_CHECKING:
    from autocast_explorer.core.report import Report
    from autocast_explorer.core.result import ExperimentResult
    from autocast_explorer.core.sweep_result import SweepPoint, SweepResult

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """Bad input from the command line: printed as one `error:` line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but bad arguments give one `error: …` line instead of usage + message."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def _widths(text: str) -> tuple[int, ...]:
    try:
        return parse_widths(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(exc.rule) from None


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags for every field of ExperimentConfig (shared by run, sweep and friends)."""
    d = ExperimentConfig()
    g = parser.add_argument_group("experiment")
    g.add_argument(
        "--widths",
        type=_widths,
        default=d.widths,
        help="layer widths: input, hidden…, classes (default 256,256,256,10)",
    )
    g.add_argument("--batch", type=int, default=d.batch, help="rows per forward (default 128)")
    g.add_argument("--seed", type=int, default=d.seed, help="torch.manual_seed (default 0)")
    g.add_argument("--dtype", choices=DTYPES, default=d.dtype, help="autocast dtype")
    g.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    g.add_argument("--activation", choices=ACTIVATIONS, default=d.activation)
    g.add_argument("--head", choices=HEADS, default=d.head, help="optional output head")
    g.add_argument("--atol", type=float, default=d.atol, help="allclose atol (default 0.05)")
    g.add_argument("--rtol", type=float, default=d.rtol, help="allclose rtol (default 1e-5)")
    g.add_argument("--topk", type=int, default=d.topk, help="k for top-k agreement (default 5)")
    g.add_argument("--input-scale", type=float, default=d.input_scale, help="multiply x by this")
    g.add_argument("--input-distribution", choices=INPUT_DISTRIBUTIONS, default="normal")
    g.add_argument(
        "--min-time",
        type=float,
        default=d.min_time,
        help="measurement budget: seconds of timed forwards per mode (default 0.5)",
    )
    g.add_argument(
        "--allow-slow",
        action="store_true",
        help="run even if one forward is estimated to take over 10 s",
    )


def config_from_args(args: argparse.Namespace) -> ExperimentConfig:
    return ExperimentConfig(
        widths=args.widths,
        batch=args.batch,
        seed=args.seed,
        dtype=args.dtype,
        threads=args.threads,
        activation=args.activation,
        head=args.head,
        atol=args.atol,
        rtol=args.rtol,
        topk=args.topk,
        input_scale=args.input_scale,
        input_distribution=args.input_distribution,
        min_time=args.min_time,
        allow_slow=args.allow_slow,
    )


class StderrProgress:
    """Progress on stderr, only for a TTY and only once the work has taken over a second."""

    def __init__(self, stream: TextIO = sys.stderr, delay: float = 1.0) -> None:
        self.stream = stream
        self.enabled = stream.isatty()
        self.start = time.monotonic()
        self.delay = delay
        self.shown = False

    def __call__(self, fraction: float, message: str) -> None:
        if not self.enabled or time.monotonic() - self.start < self.delay:
            return
        self.shown = True
        self.stream.write(f"\r\x1b[K{fraction:4.0%} {message}")
        self.stream.flush()

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def write_output(path: str, text: str) -> None:
    """'-' means stdout; anything else is written atomically."""
    if path == "-":
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    from autocast_explorer.core.files import write_atomic

    try:
        write_atomic(path, text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def write_outputs(args: argparse.Namespace, result: ExperimentResult | SweepResult) -> None:
    """--json and --csv of `run` and `sweep`: the result's JSON and CSV where asked."""
    if args.json:
        write_output(args.json, result.to_json())
    if args.csv:
        write_output(args.csv, result.to_csv())


def cmd_run(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    from autocast_explorer.core.engine import run_experiment
    from autocast_explorer.core.placements import (
        format_placements,
        from_result,
        run_with_placements,
    )
    from autocast_explorer.core.summary import format_summary

    placements = getattr(args, "placements", False)
    progress = StderrProgress()
    try:
        run = run_with_placements if placements else run_experiment
        result = run(config, progress=progress)
    finally:
        progress.close()
    write_outputs(args, result)
    if args.json != "-" and args.csv != "-":
        print(format_summary(result))
        if placements:
            print(f"\n{format_placements(from_result(result))}")
    if args.report:
        try:
            report, problem = _write_report(result, args.report)
        except OSError as exc:
            raise UsageError(
                f"cannot write report to {args.report}: {exc.strerror or exc}"
            ) from None
        if problem:
            sys.stderr.write(f"note: the report has no chart images: {problem}\n")
        if "-" not in (args.json, args.csv):
            print(
                f"\nReport written to {report.directory}: {', '.join(f.name for f in report.files)}"
            )
    return 0


def _write_report(result: ExperimentResult, directory: str) -> tuple[Report, str]:
    """The report with chart PNGs drawn offscreen by the window's charts (gui.report_charts).

    Imported lazily: `run` without --report never loads Qt. Without Qt the report is written
    without images and the reason is returned.
    """
    try:
        from autocast_explorer.gui.report_charts import write_report_with_charts
    except ImportError as exc:
        from autocast_explorer.core.report import write_report

        return write_report(result, directory), f"Qt could not be loaded ({exc})"
    return write_report_with_charts(result, directory)


def cmd_compare(args: argparse.Namespace) -> int:
    """Side-by-side table of saved results; a bad file is one `error:` line, exit 2."""
    from autocast_explorer.core.compare import ResultFileError, format_comparison, load_comparison

    try:
        comparison = load_comparison(args.files)
    except ResultFileError as exc:
        raise UsageError(str(exc)) from None
    print(format_comparison(comparison))
    return 0


def cmd_ops(args: argparse.Namespace) -> int:
    """Probe each common op's autocast policy on this torch and CPU; print a table or JSON."""
    from autocast_explorer.core.oppolicy import probe_ops
    from autocast_explorer.core.summary import format_probe

    if args.threads is not None and args.threads < 1:
        raise UsageError(f"threads: must be an integer ≥ 1 (got {args.threads})")
    progress = StderrProgress()
    try:
        probe = probe_ops(args.dtype, threads=args.threads, progress=progress)
    finally:
        progress.close()
    if args.json:
        write_output(args.json, probe.to_json())
    if args.json != "-":
        print(format_probe(probe))
    return 0


def cmd_gui(args: argparse.Namespace) -> int:
    from autocast_explorer.gui.app import run_app

    return run_app(sys.argv[:1])


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="autocast-explorer",
        description="See what torch.autocast('cpu') does on this CPU. "
        "With no command, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    run = sub.add_parser("run", help="measure one config plain vs autocast and print a summary")
    add_config_arguments(run)
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
    add_sweep_parser(sub)

    ops = sub.add_parser(
        "ops", help="probe which dtype autocast gives each common op (lower/fp32/follows/promote)"
    )
    ops.add_argument("--dtype", choices=DTYPES, default="bfloat16", help="autocast dtype")
    ops.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    ops.add_argument("--json", metavar="PATH|-", help="write the probe JSON ('-': stdout only)")
    ops.set_defaults(handler=cmd_ops)

    compare = sub.add_parser(
        "compare", help="compare saved results (run --json) side by side, e.g. two machines"
    )
    compare.add_argument("files", nargs="+", metavar="RESULT.json", help="result files")
    compare.set_defaults(handler=cmd_compare)

    gui = sub.add_parser("gui", help="open the window (the default)")
    gui.set_defaults(handler=cmd_gui)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `autocast-explorer` script and `python -m autocast_explorer`."""
    from autocast_explorer.core.progress import Cancelled

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        handler: Callable[[argparse.Namespace], int] = getattr(args, "handler", cmd_gui)
        return handler(args)
    except (UsageError, ConfigError) as exc:
        return _fail(str(exc))
    except (KeyboardInterrupt, Cancelled):
        sys.stderr.write("\ninterrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    except MemoryError:
        return _fail("out of memory: use smaller widths or batch")


def _fail(message: str) -> int:
    sys.stderr.write(f"error: {message}\n")
    return EXIT_USAGE


def resources_dir() -> Path:
    """The repository's resources/ folder (presets, style sheets); see core.resources."""
    from autocast_explorer.core.resources import resources_dir as _resources_dir

    return _resources_dir()


# ---- issue 4: sweeps ------------------------------------------------------------------
SWEEP_EPILOG = """\
values: a comma list (1,8,64,512) or LOW:HIGH:COUNT, log-spaced (1:2048:12).
  Defaults: batch 1:2048:12 (powers of two), width 64:4096:7.
  --param width sets every hidden width (input width and classes stay).
  --param batch,width measures a grid: --values are the batch sizes, --width-values the
  hidden widths; rows are measured one width at a time.
Each point is measured for --min-time seconds in total, float32 and autocast alternated, so
a sweep takes about points × --min-time plus warm-up. Every point passes the memory and time
guards before the first is measured.

examples:
  autocast-explorer sweep --param batch --values 1,8,64,512
  autocast-explorer sweep --param width --values 64:4096:7 --batch 256 --json sweep.json
  autocast-explorer sweep --param batch,width --values 1,64,1024 --width-values 128,1024
"""


def add_sweep_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The `sweep` subcommand: batch or hidden width (or both) over many values."""
    sweep = sub.add_parser(
        "sweep",
        help="measure plain vs autocast over many batch sizes or widths; find the crossover",
        description="Measure float32 vs autocast at every value of batch size or hidden "
        "width and report where autocast's speedup crosses 1.0.",
        epilog=SWEEP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = sweep.add_argument_group("sweep")
    what.add_argument(
        "--param",
        choices=("batch", "width", "batch,width"),
        metavar="batch|width|batch,width",
        default="batch",
        help="what to vary (default batch); batch,width is a 2-D grid",
    )
    what.add_argument("--values", metavar="LIST|LOW:HIGH:N", help="values of --param")
    what.add_argument(
        "--width-values", metavar="LIST|LOW:HIGH:N", help="grid only: the hidden widths"
    )
    what.add_argument(
        "--no-onednn",
        action="store_true",
        help="skip asking oneDNN (verbose log of one forward) which kernel ran",
    )
    add_config_arguments(sweep)
    out = sweep.add_argument_group("output")
    out.add_argument("--json", metavar="PATH|-", help="write the sweep JSON ('-': stdout only)")
    out.add_argument("--csv", metavar="PATH|-", help="write one CSV row per point")
    sweep.set_defaults(handler=cmd_sweep)
    return sweep


def cmd_sweep(args: argparse.Namespace) -> int:
    """Run a sweep, printing each point's row as it completes (unless stdout is the JSON)."""
    from autocast_explorer.core.sweep import check_points, run_spec
    from autocast_explorer.core.sweep_spec import SweepSpec, default_values, parse_values
    from autocast_explorer.core.sweep_summary import (
        format_conclusion,
        point_row,
        sweep_title,
        table_header,
    )

    config = config_from_args(args)
    grid = args.param == "batch,width"
    param = "batch" if grid else args.param
    if args.width_values is not None and not grid:
        raise UsageError("--width-values is for a grid: use --param batch,width")
    values = parse_values(args.values) if args.values is not None else default_values(param)
    widths = ()
    if grid:
        widths = (
            parse_values(args.width_values, "width_values")
            if args.width_values is not None
            else default_values("width")
        )
    spec = SweepSpec(param, values, widths)
    human = args.json != "-" and args.csv != "-"
    progress = StderrProgress()

    def on_point(point: SweepPoint) -> None:
        progress.close()
        print(point_row(point), flush=True)

    if human:
        check_points(spec.plan(config))  # refusals come before the table's header
        print(sweep_title(config, spec))
        print(table_header(spec), flush=True)
    try:
        result = run_spec(
            config,
            spec,
            progress=progress,
            on_point=on_point if human else None,
            probe_onednn=not args.no_onednn,
        )
    finally:
        progress.close()
    write_outputs(args, result)
    if human:
        print(format_conclusion(result))
    return 0

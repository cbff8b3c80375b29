"""`autocast-explorer sweep`: plain vs autocast over many sizes; crossover and verdict."""

from __future__ import annotations

import argparse
import textwrap
from typing import TYPE_CHECKING

from autocast_explorer.cli.common import (
    StderrProgress,
    UsageError,
    add_config_arguments,
    check_outputs,
    config_from_args,
    preset_from_args,
    publish_outputs,
    raise_problems,
    resource_errors,
    result_files,
    to_stdout,
)
from autocast_explorer.cli.user_code import running_user_code
from autocast_explorer.core.sweeps.spec import (
    GRID,
    default_ranges_in_words,
    sweep_params,
    sweep_params_in_words,
)

if TYPE_CHECKING:
    from autocast_explorer.core.sweeps.result import SweepPoint
    from autocast_explorer.core.sweeps.spec import SweepSpec

SWEEP_EPILOG = """\
values: a comma list (1,8,64,512) or LOW:HIGH:COUNT, log-spaced (1:2048:12).
__DEFAULTS__
  --param width sets every hidden width (input width and classes stay).
  --param batch,width measures a grid: --values are the batch sizes, --width-values the
  hidden widths; rows are measured one width at a time.
Each point is measured for --min-time seconds in total, float32 and autocast alternated, so
a sweep takes about points × --min-time plus warm-up. Every point passes the memory and time
guards before the first is measured.
--preset starts from a preset's config and, if it holds one, its sweep; --param, --values,
--width-values and the experiment flags override what the preset says.

examples:
  autocast-explorer sweep --param batch --values 1,8,64,512
  autocast-explorer sweep --preset batch-sweep
  autocast-explorer sweep --preset width-sweep --values 64,256,1024 --threads 1
  autocast-explorer sweep --param width --values 64:4096:7 --batch 256 --json sweep.json
  autocast-explorer sweep --param batch,width --values 1,64,1024 --width-values 128,1024
  autocast-explorer sweep --model transformer --param seq --values 16,64,256
  autocast-explorer sweep --model cnn --param channels --values 16,64,256
"""


#: Keeps a param and its range on one line when the defaults are wrapped.
NO_BREAK = "\u00a0"


def sweep_epilog() -> str:
    """The epilog, its default values from the family registry (each family's sizes)."""
    ranges = default_ranges_in_words().replace(" ", NO_BREAK).replace(f",{NO_BREAK}", ", ")
    defaults = textwrap.fill(
        f"Defaults: {ranges} (batch: the powers of two).",
        width=90,
        initial_indent="  ",
        subsequent_indent="  ",
    )
    return SWEEP_EPILOG.replace("__DEFAULTS__", defaults.replace(NO_BREAK, " "))


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The `sweep` subcommand: batch or hidden width (or both) over many values."""
    sweep = sub.add_parser(
        "sweep",
        help="measure plain vs autocast over many batch sizes or widths; find the crossover",
        description="Measure float32 vs autocast at every value of batch size or hidden "
        "width and report where autocast's speedup crosses 1.0.",
        epilog=sweep_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = sweep.add_argument_group("sweep")
    what.add_argument(
        "--param",
        choices=(*sweep_params(), GRID),
        metavar="|".join((*sweep_params(), GRID)),
        help="what to vary (default: the preset's, else batch; any model): "
        f"{sweep_params_in_words()}; {GRID} is a 2-D grid (mlp)",
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
    from autocast_explorer.core.sweeps.runner import check_points, run_spec
    from autocast_explorer.core.sweeps.summary import (
        format_conclusion,
        point_row,
        sweep_title,
        table_header,
    )

    preset = preset_from_args(args)
    config = config_from_args(args, preset.config if preset else None)
    spec = spec_from_args(args, preset.sweep if preset else None)
    check_outputs(args)
    human = not to_stdout(args.json, args.csv)
    progress = StderrProgress()
    with progress, resource_errors(config), running_user_code(config) as documents:

        def on_point(point: SweepPoint) -> None:
            progress.close()
            print(point_row(point), file=documents, flush=True)

        if human:
            check_points(spec.plan(config))  # refusals come before the table's header
            print(sweep_title(config, spec), file=documents)
            print(table_header(spec), file=documents, flush=True)
        result = run_spec(
            config,
            spec,
            progress=progress,
            on_point=on_point if human else None,
            probe_onednn=not args.no_onednn,
            confirm=progress.announce,
        )
    problems = publish_outputs(
        result_files(args, result), result.to_json(), name=f"{result.KIND}.json"
    )
    if human:
        print(format_conclusion(result))
    raise_problems(problems)
    return 0


def spec_from_args(args: argparse.Namespace, preset_sweep: SweepSpec | None) -> SweepSpec:
    """The sweep: --param/--values/--width-values where given, else the preset's, else defaults.

    A preset's values belong to its parameter: switching --param drops them for the defaults.
    """
    from autocast_explorer.core.sweeps.spec import GRID, SweepSpec, default_values, parse_values

    label = args.param or (preset_sweep.label if preset_sweep else "batch")
    grid = label == GRID
    param = "batch" if grid else label
    if args.width_values is not None and not grid:
        raise UsageError("--width-values is for a grid: use --param batch,width")
    base = preset_sweep if preset_sweep is not None and preset_sweep.label == label else None
    if args.values is not None:
        values = parse_values(args.values)
    else:
        values = base.values if base else default_values(param)
    widths: tuple[int, ...] = ()
    if grid:
        if args.width_values is not None:
            widths = parse_values(args.width_values, "width_values")
        else:
            widths = base.width_values if base else default_values("width")
    return SweepSpec(param, values, widths)

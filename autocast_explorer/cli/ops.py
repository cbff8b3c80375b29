"""`autocast-explorer ops`: the live op-policy probe as a table or JSON."""

from __future__ import annotations

import argparse

from autocast_explorer.cli.common import (
    StderrProgress,
    check_output,
    raise_problems,
    to_stdout,
    write_output,
)
from autocast_explorer.core.experiment.config import DTYPES, validate_threads

OPS_EPILOG = """\
Each op runs under autocast with float32, low-precision and mixed inputs; its policy is read
from the dtypes it really returned: lower (runs in the autocast dtype), fp32 (forced to
float32), follows (keeps its input's dtype) or promote (widest input).

examples:
  autocast-explorer ops
  autocast-explorer ops --dtype float16 --threads 1
  autocast-explorer ops --json ops.json
  autocast-explorer ops --json - | jq '.ops[] | select(.policy == "fp32") | .name'
"""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The `ops` subcommand."""
    ops = sub.add_parser(
        "ops",
        help="probe which dtype autocast gives each common op (lower/fp32/follows/promote)",
        description="Probe, on this torch and CPU, which dtype torch.autocast('cpu') gives "
        "30+ common ops.",
        epilog=OPS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ops.add_argument("--dtype", choices=DTYPES, default="bfloat16", help="autocast dtype")
    ops.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    ops.add_argument("--json", metavar="PATH|-", help="write the probe JSON ('-': stdout only)")
    ops.set_defaults(handler=cmd_ops)
    return ops


def cmd_ops(args: argparse.Namespace) -> int:
    """Probe each common op's autocast policy on this torch and CPU; print a table or JSON."""
    from autocast_explorer.core.experiment.summary import format_probe
    from autocast_explorer.core.numerics.oppolicy import probe_ops

    validate_threads(args.threads)
    check_output("--json", args.json)
    progress = StderrProgress()
    try:
        probe = probe_ops(args.dtype, threads=args.threads, progress=progress)
    finally:
        progress.close()
    problem = write_output(args.json, probe.to_json(), name="probe.json") if args.json else None
    if not to_stdout(args.json):
        print(format_probe(probe))
    raise_problems([problem] if problem else [])
    return 0

"""`autocast-explorer ops`: the live op-policy probe as a table or JSON."""

from __future__ import annotations

import argparse

from autocast_explorer.cli.common import (
    StderrProgress,
    UsageError,
    check_output,
    publish_outputs,
    raise_problems,
    to_stdout,
)
from autocast_explorer.core.runtime.dtypes import DTYPES
from autocast_explorer.core.runtime.threads import validate_threads

OPS_EPILOG = """\
Each op runs under autocast with float32, low-precision and mixed inputs; its policy is read
from the dtypes it really returned (comparisons and complex results: the dtype they computed
in): lower (runs in the autocast dtype), fp32 (forced to float32), follows (keeps its input's
dtype), promote (widest input), error or other. Beside it: what PyTorch documents (the AMP
docs' CPU lists and torch's own AutocastCPUTestLists); '!' marks a disagreement.

examples:
  autocast-explorer ops
  autocast-explorer ops --dtype float16
  autocast-explorer ops --only losses,linalg
  autocast-explorer ops --op lstm --op eq
  autocast-explorer ops --json ops.json
  autocast-explorer ops --json - | jq '.ops[] | select(.disagrees) | .name'
"""


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The `ops` subcommand."""
    from autocast_explorer.core.numerics.opcategories import CATEGORIES

    ops = sub.add_parser(
        "ops",
        help="probe which dtype autocast gives each op on PyTorch's CPU lists "
        "(lower/fp32/follows/promote), beside what PyTorch documents",
        description="Probe, on this torch and CPU, which dtype torch.autocast('cpu') gives\n"
        "every op on PyTorch's CPU autocast lists (~150), beside what PyTorch documents.",
        epilog=OPS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ops.add_argument("--dtype", choices=DTYPES, default="bfloat16", help="autocast dtype")
    ops.add_argument(
        "--threads", type=int, default=None, help="torch threads (default: 1; the ops are tiny)"
    )
    ops.add_argument(
        "--only",
        metavar="CATEGORY",
        action="append",
        default=[],
        help=f"probe only this category (repeat or comma-separate): {', '.join(CATEGORIES)}",
    )
    ops.add_argument(
        "--op",
        metavar="NAME",
        action="append",
        default=[],
        help="probe only this op (repeat or comma-separate), e.g. --op linear,cat",
    )
    ops.add_argument("--json", metavar="PATH|-", help="write the probe JSON ('-': stdout only)")
    ops.set_defaults(handler=cmd_ops)
    return ops


def cmd_ops(args: argparse.Namespace) -> int:
    """Probe each op's autocast policy on this torch and CPU; print a table or JSON."""
    from autocast_explorer.core.experiment.summary import format_probe
    from autocast_explorer.core.numerics.oppolicy import PROBE_THREADS, probe_ops, select_specs

    validate_threads(args.threads)
    check_output("--json", args.json)
    only = [name for text in args.only for name in _names(text)]
    names = [name for text in args.op for name in _names(text)]
    if (args.only or args.op) and not (only or names):
        raise UsageError("only/op: give a category or an op name (got an empty value)")
    specs = select_specs(only, names)
    threads = PROBE_THREADS if args.threads is None else args.threads
    with StderrProgress() as progress:
        probe = probe_ops(args.dtype, specs=specs, threads=threads, progress=progress)
    text = probe.to_json()
    files = [(args.json, text)] if args.json else []
    problems = publish_outputs(files, text, name="probe.json")
    if not to_stdout(args.json):
        print(format_probe(probe))
    raise_problems(problems)
    return 0

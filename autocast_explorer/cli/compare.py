"""`autocast-explorer compare`: saved results side by side (e.g. two machines)."""

from __future__ import annotations

import argparse

from autocast_explorer.cli.common import UsageError

COMPARE_EPILOG = """\
Each file is a result document (autocast-explorer/result/1) written by `run --json`, the
window's File › Save or `run --report`. A missing, empty, truncated, foreign or oversized file
is refused with exit code 2 and one line naming it.

examples:
  autocast-explorer run --json laptop.json          # on each machine
  autocast-explorer compare laptop.json server-amx.json
  autocast-explorer compare runs/*.json
"""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The `compare` subcommand."""
    compare = sub.add_parser(
        "compare",
        help="compare saved results (run --json) side by side, e.g. two machines",
        description="Show saved results side by side: config, machine, latency and speedup.",
        epilog=COMPARE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    compare.add_argument("files", nargs="+", metavar="RESULT.json", help="result files")
    compare.set_defaults(handler=cmd_compare)
    return compare


def cmd_compare(args: argparse.Namespace) -> int:
    """Side-by-side table of saved results; a bad file is one `error:` line, exit 2."""
    from autocast_explorer.core.learning.compare import (
        ResultFileError,
        format_comparison,
        load_comparison,
    )

    try:
        comparison = load_comparison(args.files)
    except ResultFileError as exc:
        raise UsageError(str(exc)) from None
    print(format_comparison(comparison))
    return 0

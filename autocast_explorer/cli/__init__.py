"""Command line over the engine: `autocast-explorer run|sweep|ops|compare`; no command opens the
window. One module per command, each with `add_parser(sub)`; this module parses and dispatches.

Heavy imports (torch, Qt) happen inside the commands so `--help` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from autocast_explorer import __version__
from autocast_explorer.cli import compare, ops, run, sweep
from autocast_explorer.cli.common import EXIT_INTERRUPTED, EXIT_USAGE, Parser, UsageError
from autocast_explorer.core.experiment.config import ConfigError

#: The subcommands, in the order `--help` lists them.
COMMANDS = (run, sweep, ops, compare)


def cmd_gui(args: argparse.Namespace) -> int:
    from autocast_explorer.gui.shell.app import run_app

    return run_app(sys.argv[:1])


def window_main() -> int:
    """Entry point of `autocast-explorer-window`: the window, without a console on Windows."""
    return cmd_gui(argparse.Namespace())


MAIN_EPILOG = """\
examples:
  autocast-explorer                              # the window
  autocast-explorer run --preset tutorial        # the tutorial's example, as a summary
  autocast-explorer sweep --preset batch-sweep   # where autocast starts to pay
  autocast-explorer ops --dtype float16          # which dtype autocast gives each op
  autocast-explorer compare a.json b.json        # saved results side by side

Each command's --help lists its flags with more examples.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="autocast-explorer",
        description="See what torch.autocast('cpu') does on this CPU. "
        "With no command, opens the window.",
        epilog=MAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    for command in COMMANDS:
        command.add_parser(sub)
    gui = sub.add_parser(
        "gui",
        help="open the window (the default)",
        epilog="example:\n  autocast-explorer gui    # the same as autocast-explorer alone",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    gui.set_defaults(handler=cmd_gui)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `autocast-explorer` script and `python -m autocast_explorer`."""
    from autocast_explorer.core.experiment.progress import Cancelled

    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        handler: Callable[[argparse.Namespace], int] = getattr(args, "handler", cmd_gui)
        return handler(args)
    except (UsageError, ConfigError) as exc:
        return fail(str(exc))
    except (KeyboardInterrupt, Cancelled):
        sys.stderr.write("\ninterrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    except MemoryError:
        return fail("out of memory: use smaller widths or batch")


def fail(message: str) -> int:
    """One `error:` line on stderr; the exit code for bad input."""
    sys.stderr.write(f"error: {message}\n")
    return EXIT_USAGE


def resources_dir() -> Path:
    """The program's resources folder (presets, schemas, icon); see core.documents.resources."""
    from autocast_explorer.core.documents.resources import resources_dir as _resources_dir

    return _resources_dir()


__all__ = ["EXIT_INTERRUPTED", "EXIT_USAGE", "UsageError", "build_parser", "main", "window_main"]

"""Command line over the engine: `autocast-explorer run|sweep|ops|compare|plan`; no command
opens the window. One module per command, each with `add_parser(sub)`; this module parses and
dispatches.

Heavy imports (torch, Qt) happen inside the commands so `--help` stays fast.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from autocast_explorer import __version__
from autocast_explorer.cli import compare, ops, plan, run, signals, sweep
from autocast_explorer.cli.common import (
    EXIT_FAILED,
    EXIT_USAGE,
    FailedError,
    Parser,
    UsageError,
)
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.exit_codes import EXIT_INTERRUPTED

#: The subcommands, in the order `--help` lists them.
COMMANDS = (run, sweep, ops, compare, plan)


def cmd_gui(args: argparse.Namespace) -> int:
    """The window; where Qt cannot be loaded (a headless install), one line saying so, exit 1."""
    try:
        from autocast_explorer.gui.window.app import run_app
    except ImportError as exc:
        return fail(
            f"the window needs PySide6 and pyqtgraph, which could not be loaded ({exc}); "
            "run, sweep, ops and compare work without them (docs/install.md, 'Headless')",
            EXIT_FAILED,
        )
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
  autocast-explorer plan --criterion 'agree>=99.5%'   # what to run here, measured

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
    parser.add_argument(
        "--reset-settings",
        action="store_true",
        help="forget the window's saved settings (for a window that cannot start) and exit",
    )
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


def cmd_reset_settings() -> int:
    """`--reset-settings`: remove the window's settings without starting the window."""
    from autocast_explorer.gui.window.settings import reset_settings_file

    print(f"Settings reset to defaults ({reset_settings_file()}).")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `autocast-explorer` script and `python -m autocast_explorer`.

    Exit codes: 0 done; 1 the work ran but could not finish (an output still unwritable, with
    the result kept in a fallback file; memory ran out); 2 bad input, refused before any
    measuring; 130 Ctrl-C; 143 SIGTERM. Every failure is one `error:` line, never a traceback.
    """
    from autocast_explorer.core.runtime.progress import Cancelled

    try:
        args = build_parser().parse_args(argv)
    except UsageError as exc:
        return fail(str(exc))
    args.started = time.monotonic()  # before torch loads: a plan's budget counts from here
    handler: Callable[[argparse.Namespace], int] = getattr(args, "handler", cmd_gui)
    if handler is cmd_gui and not args.reset_settings:
        if argv is None:
            signals.restore_defaults()
        return cmd_gui(args)  # the window handles Ctrl-C itself (gui.app.InterruptWatcher)
    with signals.installed(restore=argv is not None):
        try:
            signals.raise_early()
            if args.reset_settings:
                if args.command:
                    raise UsageError("--reset-settings takes no command")
                return cmd_reset_settings()
            load_torch()
            return handler(args)
        except (UsageError, ConfigError) as exc:
            return fail(str(exc))
        except FailedError as exc:
            return fail(str(exc), EXIT_FAILED)
        except signals.Interrupted as exc:
            return interrupted(exc.word, exc.exit_code)
        except (KeyboardInterrupt, Cancelled):
            return interrupted("interrupted", EXIT_INTERRUPTED)
        except BrokenPipeError:
            return 0
        except MemoryError:
            return fail("out of memory: use smaller widths or batch", EXIT_FAILED)
        except RecursionError:
            return fail("input nested too deeply", EXIT_USAGE)


def load_torch() -> None:
    """Import torch (and numpy) with signals deferred: a KeyboardInterrupt inside their import
    leaves a half-initialised module behind that later code trips over (`module 'numpy' has no
    attribute 'logical_or'`), so Ctrl-C during start-up takes effect once the import is done."""
    with signals.deferred():
        import torch  # noqa: F401


def interrupted(word: str, code: int) -> int:
    """One line on stderr (after the terminal's ^C, on a line of its own)."""
    signals.ignore_further()
    lead = "\n" if sys.stderr.isatty() else ""
    sys.stderr.write(f"{lead}{word}\n")
    sys.stderr.flush()
    return code


def fail(message: str, code: int = EXIT_USAGE) -> int:
    """One `error:` line on stderr (control characters removed, cut to a screenful); the exit
    code."""
    from autocast_explorer.core.documents.reader import cap_text, clean_text

    sys.stderr.write(f"error: {clean_text(cap_text(message))}\n")
    return code


def resources_dir() -> Path:
    """The program's resources folder (presets, schemas, icon); see core.documents.resources."""
    from autocast_explorer.core.documents.resources import resources_dir as _resources_dir

    return _resources_dir()


__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "UsageError",
    "build_parser",
    "main",
    "window_main",
]

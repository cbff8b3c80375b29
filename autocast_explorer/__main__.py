"""`python -m autocast_explorer` and the `autocast-explorer` script (both call `entry`).

Ctrl-C and SIGTERM are noted from the first line that runs, before the command line's modules
load (a tenth of a second): a signal that early still ends in one line and exit 130/143.
"""

import signal
import sys

_early: list[int] = []


def _note(signum: int, _frame: object) -> None:
    _early.append(signum)


def entry() -> int:
    """Run the command line; a signal that came while it loaded interrupts it at once (the
    command line's own handlers replace this one, or the window restores Python's). A command
    (not the window) then exits at once: see cli.signals.exit_now."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _note)
    from autocast_explorer.cli import main, signals

    signals.note_early(_early)
    code = main()
    if signals.command_ran():
        signals.exit_now(code)
    return code


if __name__ == "__main__":
    sys.exit(entry())

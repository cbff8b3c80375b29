"""The exit codes a signal gives, shared by the command line and the window (both follow the
shell's convention, 128 + the signal number: 130 for Ctrl-C, 143 for SIGTERM)."""

from __future__ import annotations

import signal


def signal_exit_code(signum: int) -> int:
    """128 + the signal number."""
    return 128 + signum


EXIT_INTERRUPTED = signal_exit_code(signal.SIGINT)

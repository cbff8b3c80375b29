"""Signals in the shutdown tail: after a command's outputs are written, SIGINT or SIGTERM is
neither ignored (exit 0, no line) nor raised inside the interpreter's teardown: it ends the
process at once with one line and 128 + the signal number. A command that is not interrupted
still flushes everything it printed before leaving without the slow teardown.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.process  # every test here starts a fresh Python

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

TAIL = textwrap.dedent(
    """
    import os, signal, sys, time
    from autocast_explorer.cli import signals
    with signals.installed(restore=False):
        pass  # the command's work, its outputs published
    print("published", flush=True)
    os.kill(os.getpid(), {signum})
    time.sleep(30)  # the interpreter's slow teardown, stood in for
    sys.exit(0)
    """
)


@pytest.mark.parametrize(
    ("signum", "word"), [(signal.SIGINT, "interrupted"), (signal.SIGTERM, "terminated")]
)
def test_a_signal_after_the_outputs_ends_the_process_with_one_line(signum, word):
    proc = subprocess.run(
        [sys.executable, "-c", TAIL.format(signum=int(signum))],
        capture_output=True,
        text=True,
        timeout=60,
        env=ENV,
    )
    assert proc.returncode == 128 + signum
    assert proc.stdout == "published\n"
    assert proc.stderr == f"{word} (after all outputs were written)\n"


def test_a_signal_while_winding_down_after_an_interruption_is_ignored():
    script = textwrap.dedent(
        """
        import os, signal, sys
        from autocast_explorer.cli import signals
        with signals.installed(restore=False):
            signals.ignore_further()  # interrupted: the one line is being written
        os.kill(os.getpid(), signal.SIGINT)
        sys.exit(130)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=ENV
    )
    assert proc.returncode == 130 and proc.stderr == ""


def test_a_finished_command_flushes_its_output_before_leaving(tmp_path):
    out = tmp_path / "r.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "autocast_explorer",
            "run",
            "--widths",
            "8,4",
            "--batch",
            "2",
            "--min-time",
            "0.01",
            "--threads",
            "1",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=ENV,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Autocast Explorer · widths 8,4")
    assert "Verdict:" in proc.stdout  # the last lines too: flushed before os._exit
    assert json.loads(out.read_text())["config"]["widths"] == [8, 4]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]

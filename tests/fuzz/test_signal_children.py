"""SIGINT and SIGTERM end the command promptly and take its children along:

- a child process (inductor's C++ build: the g++ driver and its cc1plus) gets SIGTERM before
  the interruption unwinds, so it removes its temporary files itself and nothing keeps
  compiling after the command is gone (subprocess.run alone SIGKILLs the driver, leaving
  `cc*.s` files and an orphaned cc1plus);
- a main thread held inside one operation (a huge model's first forward: a torch op never
  returns to Python, whose handlers run only between bytecodes) no longer holds the signal:
  the watchdog ends the process with one line and 128 + the signal number;
- inside a deferred region (a report being drawn) the watchdog waits: the signal still takes
  effect when the region ends, through the command's own path.

A fake compiler stands in for g++ (a driver that deletes its temporary file on SIGTERM, as
gcc's does, and a child that would run on); a blocked signal mask stands in for the held op.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from autocast_explorer.core.runtime.children import descendants

pytestmark = [
    pytest.mark.process,  # every test here starts a fresh Python
    pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="children are found in /proc"),
]

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
SIGNALS = [
    pytest.param(signal.SIGINT, "interrupted", id="SIGINT"),
    pytest.param(signal.SIGTERM, "terminated", id="SIGTERM"),
]

#: The fake compiler driver: a temporary file it removes on SIGTERM (gcc's fatal_signal), and a
#: "cc1plus" child that would run for a minute; both pids written where the test reads them.
DRIVER = textwrap.dedent(
    """
    import os, signal, subprocess, sys, time
    folder = sys.argv[1]
    temporary = os.path.join(folder, "cc0000.s")
    open(temporary, "w").close()
    def fatal_signal(signum, frame):
        os.remove(temporary)
        os._exit(128 + signum)
    signal.signal(signal.SIGTERM, fatal_signal)
    compiler = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    with open(os.path.join(folder, "pids.tmp"), "w") as pids:
        pids.write(f"{os.getpid()} {compiler.pid}")
    os.rename(os.path.join(folder, "pids.tmp"), os.path.join(folder, "pids"))
    compiler.wait()
    """
)

#: The command: inductor's way of running the compiler, with the CLI's signal handling.
COMMAND = textwrap.dedent(
    """
    import subprocess, sys
    from autocast_explorer.cli import signals
    try:
        with signals.installed(restore=False):
            subprocess.run([sys.executable, sys.argv[1], sys.argv[2]], capture_output=True)
    except signals.Interrupted as exc:
        sys.stderr.write(exc.word + "\\n")
        sys.exit(exc.exit_code)
    """
)


def _wait_for(path: Path, seconds: float = 120) -> str:
    """The file's text once it exists (the fake compiler started); polled, not timed."""
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)
    return path.read_text()


def _gone(pid: int, seconds: float = 30) -> bool:
    """True once `pid` has ended (an orphan is collected by init: polled)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[-1].split()[0]
        except OSError:
            return True
        if state in (b"Z", b"X"):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize(("signum", "word"), SIGNALS)
def test_a_signal_during_a_build_ends_the_compiler_and_its_temporary_files(tmp_path, signum, word):
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    proc = subprocess.Popen(
        [sys.executable, "-c", COMMAND, str(driver), str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    try:
        driver_pid, compiler_pid = map(int, _wait_for(tmp_path / "pids").split())
        assert {driver_pid, compiler_pid} <= set(descendants(proc.pid))
        proc.send_signal(signum)
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 128 + signum
    assert err == f"{word}\n"
    assert _gone(compiler_pid), "the compiler went on after the command"
    assert _gone(driver_pid)
    assert not (tmp_path / "cc0000.s").exists()  # the driver removed it: SIGTERM, not SIGKILL


#: A command whose main thread is held in one operation: its signals blocked, so only the
#: watchdog's thread hears them, as while a torch op runs for minutes.
HELD = textwrap.dedent(
    """
    import signal, sys, time
    from autocast_explorer.cli import signals
    signals.STUCK_AFTER_S = 0.2
    with signals.installed(restore=False):
        signal.pthread_sigmask(signal.SIG_BLOCK, signals.HANDLED)
        print("held", flush=True)
        time.sleep(120)
    print("the operation returned")
    """
)


def _main_thread_asleep(pid: int, seconds: float = 30) -> bool:
    """Whether the child's main thread reached its long C call (asleep in the kernel). Until
    then it runs bytecode, where Python runs a signal's handler whichever thread received it:
    a signal sent on "held" alone could land before the hold, on a busy machine."""
    deadline = time.monotonic() + seconds
    stat = Path(f"/proc/{pid}/task/{pid}/stat")
    while time.monotonic() < deadline:
        fields = stat.read_text().rsplit(")", 1)[-1].split()
        if fields and fields[0] == "S":
            return True
        time.sleep(0.01)
    return False


@pytest.mark.parametrize(("signum", "word"), SIGNALS)
def test_a_signal_ends_a_command_held_inside_one_operation(signum, word):
    proc = subprocess.Popen(
        [sys.executable, "-c", HELD],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "held\n"
        assert _main_thread_asleep(proc.pid)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)  # not the 120 s the operation would take
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 128 + signum
    assert out == ""
    assert err == f"{word} (one operation was still running; ended without it)\n"


#: Held as above, but inside a deferred region (a report's drawing): the watchdog waits, and
#: the signal is raised when the region ends, by the command's own handler.
HELD_DEFERRED = textwrap.dedent(
    """
    import signal, sys, time
    from autocast_explorer.cli import signals
    signals.STUCK_AFTER_S = 0.2
    try:
        with signals.installed(restore=False):
            with signals.deferred():
                signal.pthread_sigmask(signal.SIG_BLOCK, signals.HANDLED)
                print("held", flush=True)
                while not open(sys.argv[1]).read():
                    time.sleep(0.05)  # held until the test says the signal was sent
                time.sleep(1)  # five times STUCK_AFTER_S more, still inside the region
                signal.pthread_sigmask(signal.SIG_UNBLOCK, signals.HANDLED)
            print("the region ended")
    except signals.Interrupted as exc:
        sys.stderr.write(exc.word + "\\n")
        sys.exit(exc.exit_code)
    """
)


@pytest.mark.parametrize(("signum", "word"), SIGNALS)
def test_the_watchdog_waits_for_a_deferred_region(tmp_path, signum, word):
    sent = tmp_path / "sent"
    sent.write_text("")
    proc = subprocess.Popen(
        [sys.executable, "-c", HELD_DEFERRED, str(sent)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "held\n"
        proc.send_signal(signum)
        sent.write_text("yes")
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == 128 + signum
    assert out == ""  # raised as the region ended, before the line after it
    assert err == f"{word}\n"  # the command's own line, not the watchdog's

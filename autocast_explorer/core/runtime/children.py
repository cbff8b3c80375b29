"""The processes this one started, ended when a signal ends it: inductor's C++ build (the g++
driver, its cc1plus and as) would go on compiling after the command is gone, and a driver
killed with SIGKILL — what subprocess.run does to its child when interrupted — leaves its
temporary files (`cc*.s`) in $TMPDIR. SIGTERM first lets the driver remove them itself.

Found through /proc (Linux); elsewhere none are found and nothing is ended. A kill -9 of this
process cannot be handled: its children then finish their file and exit on their own.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

#: How long the children get to clean up after SIGTERM before SIGKILL.
GRACE_S = 1.0


def descendants(pid: int | None = None) -> list[int]:
    """Every process below `pid` (this one by default), parents before their children."""
    root = os.getpid() if pid is None else pid
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    children: dict[int, list[int]] = {}
    for entry in entries:
        fields = _stat_fields(entry) if entry.isdigit() else None
        if fields is not None and len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[int] = []
    queue = [root]
    while queue:
        for child in children.get(queue.pop(0), ()):
            found.append(child)
            queue.append(child)
    return found


def end_children(grace: float = GRACE_S) -> list[int]:
    """SIGTERM every descendant, wait up to `grace` seconds for them to go, SIGKILL the rest;
    returns their process ids (empty: there were none)."""
    pids = descendants()
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    for pid in pids:
        if _running(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    return pids


def _running(pid: int) -> bool:
    """Still running (a zombie, ended but not yet collected by its parent, is not)."""
    fields = _stat_fields(str(pid))
    return fields is not None and fields[0] not in (b"Z", b"X")


def _stat_fields(pid: str) -> list[bytes] | None:
    """/proc/PID/stat after the command name: state, parent id, …; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read()
    except OSError:
        return None
    return text.rsplit(b")", 1)[-1].split()

"""Writing files so that a crash mid-save never leaves a half-written file behind, and so that
what is already at the path is respected.

- a regular file is replaced atomically (temporary file beside it, fsync, rename);
- a symlink is written through: its target is replaced and the link stays a link;
- a character device, FIFO, socket or /dev/stdout is written directly, never replaced by a
  regular file (a rename would turn /dev/null into a file);
- every write error (ENOSPC on /dev/full, EIO) is raised, never reported as saved;
- temporary files a killed process of ours left beside the target are removed on the next write.

`check_writable` runs the same rules before any work, so a measurement is never made only to find
its output cannot be written; `save_fallback` keeps a measurement whose output still failed.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import re
import stat
import tempfile
import time
from pathlib import Path

#: Our temporary files: `.NAME.PID.RANDOM.tmp` beside the target (the pid says whose it is).
TEMP_SUFFIX = ".tmp"
#: Temporary files of an unknown writer older than this are stale (no write takes an hour).
STALE_AFTER_SECONDS = 3600.0
#: Paths that name an open descriptor of this process: write to it, never rename over it.
_DESCRIPTOR_PATHS = ("/dev/stdout", "/dev/stderr", "/dev/fd/", "/proc/")
FALLBACK_DIR_ENV = "AUTOCAST_EXPLORER_FALLBACK_DIR"


class UnwritablePath(ValueError):
    """An output path that cannot be written; str() says which and why, in one line."""


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> Path:
    """Write `data` to `path` respecting what is there (see the module docstring)."""
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if is_stream(target):
        _write_direct(target, payload)
        return target
    real = Path(os.path.realpath(target)) if target.is_symlink() else target
    real.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(real.parent, real.name)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{real.name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=real.parent
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp makes the file owner-only; give it the mode a plain open() would have.
        os.chmod(tmp, _existing_mode(real) or (0o666 & ~_umask()))
        os.replace(tmp, real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def is_stream(path: Path) -> bool:
    """True for a path to write directly: a device, FIFO, socket or one of our descriptors."""
    text = str(path)
    if text.startswith(_DESCRIPTOR_PATHS):
        return path.exists()
    try:
        mode = path.stat().st_mode  # follows links: a link to /dev/null is a device
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _write_direct(target: Path, payload: bytes) -> None:
    with open(target, "wb") as handle:
        handle.write(payload)
        handle.flush()
        with contextlib.suppress(OSError):  # devices and pipes may refuse fsync
            os.fsync(handle.fileno())


def _temp_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"^\.{re.escape(name)}\.(?:(\d+)\.)?[A-Za-z0-9_]+{re.escape(TEMP_SUFFIX)}$")


def remove_stale_temps(folder: Path, name: str) -> list[Path]:
    """Remove `.NAME.*.tmp` files of ours whose writer is gone (or, without a pid, that are old).

    A kill -9 during a write leaves one; the next write of the same file cleans it up.
    """
    pattern = _temp_pattern(name)
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        match = pattern.match(entry.name)
        if match is None or not entry.is_file(follow_symlinks=False):
            continue
        pid = match.group(1)
        if pid is not None:
            stale = int(pid) != os.getpid() and not process_alive(int(pid))
        else:
            try:
                stale = time.time() - entry.stat().st_mtime > STALE_AFTER_SECONDS
            except OSError:
                continue
        if stale:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _existing_mode(path: Path) -> int | None:
    try:
        return path.stat().st_mode & 0o777
    except OSError:
        return None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ---- checks before any work ------------------------------------------------------------------
def check_writable(path: str, what: str = "file") -> Path:
    """Raise UnwritablePath unless `path` can be written as a `what` ("file" or "folder").

    Checked: not empty, not a folder where a file goes (or a file where a folder goes), the
    parent folder exists and takes new files (permissions, read-only mounts). Nothing is
    created or changed by the check.
    """
    if not path or not path.strip():
        raise UnwritablePath(f"empty {what} path: give a {what} name")
    if "\x00" in path:
        raise UnwritablePath(f"{path!r}: a path cannot contain a NUL character")
    target = Path(path)
    if what == "file" and is_stream(target):
        if not os.access(target, os.W_OK):
            raise UnwritablePath(f"cannot write {path}: permission denied")
        return target
    real = Path(os.path.realpath(target)) if target.is_symlink() else target
    if what == "file" and real.is_dir():
        raise UnwritablePath(f"cannot write {path}: it is a folder")
    if what == "folder" and real.exists() and not real.is_dir():
        raise UnwritablePath(f"cannot write the folder {path}: a file of that name exists")
    if what == "file" and real.exists() and not os.access(real, os.W_OK):
        raise UnwritablePath(f"cannot write {path}: permission denied")
    parent = real.parent
    if not parent.exists():
        raise UnwritablePath(f"cannot write {path}: the folder {parent} does not exist")
    if not parent.is_dir():
        raise UnwritablePath(f"cannot write {path}: {parent} is not a folder")
    _probe(parent, path)
    if what == "folder" and real.is_dir():
        _probe(real, path)
    return target


def _probe(folder: Path, path: str) -> None:
    """Can a file be created in `folder`? Asked without creating one (nothing is touched): a
    read-only mount refuses even root, for whom os.access otherwise always says yes."""
    try:
        read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        read_only = False
    if read_only:
        raise UnwritablePath(f"cannot write {path}: {folder} is on a read-only file system")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UnwritablePath(f"cannot write {path}: permission denied")


# ---- the last resort -------------------------------------------------------------------------
def fallback_dirs() -> list[Path]:
    """Where a measurement goes when its own output failed: $AUTOCAST_EXPLORER_FALLBACK_DIR,
    then the user's state folder, then the temporary folder."""
    dirs = []
    if os.environ.get(FALLBACK_DIR_ENV, "").strip():
        dirs.append(Path(os.environ[FALLBACK_DIR_ENV]))
    state = os.environ.get("XDG_STATE_HOME", "").strip() or str(Path.home() / ".local" / "state")
    dirs.append(Path(state) / "autocast-explorer" / "unsaved")
    dirs.append(Path(tempfile.gettempdir()) / "autocast-explorer-unsaved")
    return dirs


def save_fallback(data: str | bytes, name: str) -> Path | None:
    """Write `data` as a new, time-stamped `name` in the first fallback folder that takes it;
    None only when none does."""
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = Path(name).name or "result.json"
    stem, dot, suffix = base.rpartition(".")
    filename = f"{stem}-{stamp}.{suffix}" if dot and stem else f"{base}-{stamp}"
    for folder in fallback_dirs():
        try:
            folder.mkdir(parents=True, exist_ok=True)
            target = folder / filename
            counter = 1
            while target.exists():
                counter += 1
                target = folder / filename.replace(stamp, f"{stamp}-{counter}")
            return write_atomic(target, data)
        except OSError:
            continue
    return None

"""Writing files so that a crash mid-save never leaves a half-written file behind, and so that
what is already at the path is respected.

- a regular file is replaced atomically (temporary file beside it, fsync, rename);
- a symlink is written through: its target is replaced and the link stays a link;
- a character device, FIFO, socket or /dev/stdout is written directly, never replaced by a
  regular file (a rename would turn /dev/null into a file); it is opened non-blocking, so a
  FIFO nobody reads is an error at once and one whose reader stops reading is given up after
  STREAM_STALL_SECONDS without progress, never an endless wait (signals are handled meanwhile);
- a symbolic link loop or a name over the file system's limit is an error, never replaced;
- several outputs are written aside first (`stage`) and then put in place together
  (`Staged.publish`), so a run ends with all its outputs or none of them;
- every write error (ENOSPC on /dev/full, EIO) is raised, never reported as saved;
- temporary files a killed process of ours left beside the target are removed on the next write.

`check_writable` runs the same rules before any work, so a measurement is never made only to find
its output cannot be written; `save_fallback` keeps a measurement whose output still failed.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import os
import re
import select
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from autocast_explorer.core.documents.reader import cap_text

#: Our temporary files: `.NAME.PID.RANDOM.tmp` beside the target (the pid says whose it is).
TEMP_SUFFIX = ".tmp"
#: Temporary files of an unknown writer older than this are stale (no write takes an hour).
STALE_AFTER_SECONDS = 3600.0
#: Paths that name an open descriptor of this process: write to it, never rename over it.
_DESCRIPTOR_PATHS = ("/dev/stdout", "/dev/stderr", "/dev/fd/", "/proc/")
FALLBACK_DIR_ENV = "AUTOCAST_EXPLORER_FALLBACK_DIR"
#: A stream (FIFO, device) that takes nothing for this long is given up.
STREAM_STALL_SECONDS = 30.0
#: A FIFO without a reader is waited for this long (a reader started alongside), no longer.
READER_WAIT_SECONDS = 2.0
#: The target's name is cut to this many bytes inside a temporary name (which adds ~25), so a
#: temporary name fits wherever the name itself fits (255 bytes on common file systems).
_TEMP_NAME_BYTES = 200


class UnwritablePath(ValueError):
    """An output path that cannot be written; str() says which and why, in one line."""


def write_atomic(
    path: str | os.PathLike[str], data: str | bytes, stall_s: float = STREAM_STALL_SECONDS
) -> Path:
    """Write `data` to `path` respecting what is there (see the module docstring); a stream
    that takes nothing for `stall_s` is given up (the window waits less than a script)."""
    staged = stage(path, data, stall_s)
    staged.publish()
    return staged.path


@dataclass
class Staged:
    """One output written aside: `temp` (beside `real`, the file a link points to) is renamed
    over it by `publish`, or removed by `discard`. A stream has no temp: `stage` wrote it."""

    path: Path
    real: Path
    temp: Path | None

    def publish(self) -> None:
        if self.temp is not None:
            try:
                os.replace(self.temp, self.real)
            except BaseException:
                self.discard()
                raise
            self.temp = None

    def discard(self) -> None:
        if self.temp is not None:
            self.temp.unlink(missing_ok=True)
            self.temp = None


def stage(
    path: str | os.PathLike[str], data: str | bytes, stall_s: float = STREAM_STALL_SECONDS
) -> Staged:
    """Write `data` beside `path` (fsync'd), to be put in place by `publish`; a stream is
    written now (there is nothing to put in place)."""
    _check_path_text(path)
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    if is_stream(target):
        write_stream(target, payload, stall_s)
        return Staged(target, target, None)
    real = resolve_link(target)
    real.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(real.parent, real.name)
    fd, tmp = tempfile.mkstemp(prefix=temp_prefix(real.name), suffix=TEMP_SUFFIX, dir=real.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp makes the file owner-only; give it the mode a plain open() would have.
        os.chmod(tmp, _existing_mode(real) or (0o666 & ~_umask()))
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Staged(target, real, Path(tmp))


#: A file path whose text ends in a separator: Path() drops it, and a file would get the name.
ENDS_IN_SEPARATOR = "it ends in '/': it names a folder, not a file"
NUL_IN_PATH = "a path cannot contain a NUL character"


def _ends_in_separator(text: str) -> bool:
    return text.endswith(("/", os.sep))


def _check_path_text(path: str | os.PathLike[str]) -> None:
    """OSError for a path no file can have: a NUL in it (os refuses it with ValueError), or
    text ending in a separator (`DIR/` would otherwise become a file named DIR)."""
    text = os.fspath(path)
    if "\x00" in text:
        raise OSError(errno.EINVAL, NUL_IN_PATH)
    if _ends_in_separator(text):
        if os.path.isdir(text):
            raise OSError(errno.EISDIR, "it is a folder")
        raise OSError(errno.EISDIR, ENDS_IN_SEPARATOR)


def resolve_link(target: Path) -> Path:
    """The file a symbolic link points to (the path itself if it is none); OSError(ELOOP) for a
    link loop, which a write must not replace."""
    if not target.is_symlink():
        return target
    try:
        os.stat(target)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "it is a symbolic link loop", str(target)) from None
        # a dangling link: write its target
    return Path(os.path.realpath(target))


def temp_prefix(name: str) -> str:
    """`.NAME.PID.` for a temporary file or folder beside NAME (NAME cut to fit)."""
    return f".{temp_name(name)}.{os.getpid()}."


def temp_name(name: str) -> str:
    """NAME as it appears in its temporary files' names (cut to fit)."""
    return os.fsencode(name)[:_TEMP_NAME_BYTES].decode("utf-8", "ignore")


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


def write_stream(target: Path, payload: bytes, stall_s: float = STREAM_STALL_SECONDS) -> None:
    """Write to a device or FIFO without ever waiting unboundedly: opened non-blocking (a FIFO
    without a reader is refused after READER_WAIT_SECONDS), written as the reader takes it,
    given up after `stall_s` without progress. Waits are short sleeps and selects, so signal
    handlers run meanwhile."""
    flags = os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
    wait_until = time.monotonic() + min(stall_s, READER_WAIT_SECONDS)
    while True:
        try:
            fd = os.open(target, flags)
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
            if time.monotonic() > wait_until:
                raise OSError(
                    errno.ENXIO, "no process is reading it (start the reader first)", str(target)
                ) from None
            time.sleep(0.02)  # a reader starting at the same moment (`cat f & run …`)
    try:
        view = memoryview(payload)
        last = time.monotonic()
        while view:
            try:
                written = os.write(fd, view)
            except BlockingIOError:
                written = 0
            if written:
                view, last = view[written:], time.monotonic()
                continue
            if time.monotonic() - last > stall_s:
                raise OSError(
                    errno.ETIMEDOUT, f"nothing was read from it for {stall_s:g} s", str(target)
                )
            select.select([], [fd], [], 0.1)
        with contextlib.suppress(OSError):  # devices and pipes may refuse fsync
            os.fsync(fd)
    finally:
        os.close(fd)


def _temp_pattern(name: str) -> re.Pattern[str]:
    short = re.escape(temp_name(name))
    return re.compile(rf"^\.{short}\.(?:(\d+)\.)?[A-Za-z0-9_]+{re.escape(TEMP_SUFFIX)}$")


def remove_stale_temps(folder: Path, name: str) -> list[Path]:
    """Remove `.NAME.*.tmp` files of ours whose writer is gone (or, without a pid, that are old).

    A kill -9 during a write leaves one; the next write of the same file cleans it up.
    """
    pattern = _temp_pattern(name)
    removed: list[Path] = []
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


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:  # a name too long on the way there
        return False


def not_a_regular_file(path: Path) -> str:
    """Why `path` cannot be read as a document ('' when it can): missing, a folder, a link
    loop, or a device/FIFO/socket (reading /dev/zero never ends; a FIFO waits for a writer).
    Asked without opening it."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a symbolic link loop"
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            return "no such file"
        return f"cannot read: {exc.strerror or exc}"
    if stat.S_ISDIR(mode):
        return "is a folder, not a file"
    if stat.S_ISFIFO(mode):
        return "is a FIFO (a named pipe), not a file"
    if not stat.S_ISREG(mode):
        return "is a device or socket, not a file"
    return ""


# ---- checks before any work ------------------------------------------------------------------
def check_writable(path: str, what: str = "file") -> Path:
    """Raise UnwritablePath unless `path` can be written as a `what` ("file" or "folder").

    Checked: not empty, not a folder where a file goes (or a file where a folder goes), not a
    symbolic link loop, a name within the file system's limit, the parent folder exists and
    takes new files (permissions, read-only mounts). Nothing is created or changed.
    """
    if not path or not path.strip():
        raise UnwritablePath(f"empty {what} path: give a {what} name")
    if "\x00" in path:
        raise UnwritablePath(f"{cap_text(repr(path), 200)}: {NUL_IN_PATH}")
    shown = cap_text(path, 200)
    if what == "file" and _ends_in_separator(path) and not os.path.isdir(path):
        raise UnwritablePath(f"cannot write {shown}: {ENDS_IN_SEPARATOR}")
    try:
        return _check_writable(Path(path), shown, what)
    except OSError as exc:  # ENAMETOOLONG, ELOOP, EACCES on a component…
        raise UnwritablePath(f"cannot write {shown}: {exc.strerror or exc}") from None


def _check_writable(target: Path, path: str, what: str) -> Path:
    _check_name(target, path)
    if what == "file" and is_stream(target):
        if not os.access(target, os.W_OK):
            raise UnwritablePath(f"cannot write {path}: permission denied")
        return target
    try:
        real = resolve_link(target)
    except OSError as exc:
        raise UnwritablePath(f"cannot write {path}: {exc.strerror}") from None
    if real != target:
        _check_name(real, path)
    if what == "file" and real.is_dir():
        raise UnwritablePath(f"cannot write {path}: it is a folder")
    if what == "folder" and real.exists() and not real.is_dir():
        raise UnwritablePath(f"cannot write the folder {path}: a file of that name exists")
    if what == "file" and real.exists() and not os.access(real, os.W_OK):
        raise UnwritablePath(f"cannot write {path}: permission denied")
    parent = real.parent
    shown_parent = cap_text(str(parent), 200)
    if not parent.exists():
        raise UnwritablePath(f"cannot write {path}: the folder {shown_parent} does not exist")
    if not parent.is_dir():
        raise UnwritablePath(f"cannot write {path}: {shown_parent} is not a folder")
    _probe(parent, path)
    if what == "folder" and real.is_dir():
        _probe(real, path)
    return target


def _check_name(real: Path, path: str) -> None:
    """Every component within the file system's name limit (else the write fails after the
    work: a 300-letter name is refused by open(), not by the shell)."""
    limit = 255
    with contextlib.suppress(OSError, ValueError):
        for folder in (real.parent, Path(".")):
            if _exists(folder):
                limit = os.pathconf(folder, "PC_NAME_MAX")
                break
    for part in real.parts:
        size = len(os.fsencode(part))
        if size > limit:
            raise UnwritablePath(
                f"cannot write {path}: a name in it is {size} bytes long, over the file "
                f"system's limit of {limit}"
            )


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

import errno
import os
import re
import stat
import subprocess
import sys
import threading
import time

import pytest

from autocast_explorer.core.documents.files import (
    FALLBACK_DIR_ENV,
    UnwritablePath,
    check_writable,
    save_fallback,
    write_atomic,
)


def test_write_atomic_replaces_content_and_leaves_no_temp_files(tmp_path):
    target = tmp_path / "sub" / "result.json"
    write_atomic(target, "first")
    write_atomic(target, b"second")
    assert target.read_text() == "second"
    assert [p.name for p in target.parent.iterdir()] == ["result.json"]


def test_new_files_get_the_umask_mode_not_owner_only(tmp_path):
    old = os.umask(0o022)
    try:
        target = write_atomic(tmp_path / "a.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


def test_existing_file_keeps_its_mode(tmp_path):
    target = tmp_path / "b.txt"
    target.write_text("old")
    target.chmod(0o600)
    write_atomic(target, "new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "c.txt"
    target.write_text("precious")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, "half")
    assert target.read_text() == "precious"
    assert [p.name for p in tmp_path.iterdir()] == ["c.txt"]


# ---- what is already at the path is respected --------------------------------------------------
def test_a_symlink_is_written_through_and_stays_a_link(tmp_path):
    real = tmp_path / "data" / "real.json"
    real.parent.mkdir()
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_atomic(link, "new")
    assert link.is_symlink()
    assert real.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "link.json"]


def test_a_character_device_is_written_not_replaced(tmp_path):
    write_atomic("/dev/null", "discarded")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_full_device_is_an_error_never_saved():
    with pytest.raises(OSError) as info:
        write_atomic("/dev/full", "x" * 100_000)
    assert info.value.errno == errno.ENOSPC
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_fifo_is_written_directly(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    write_atomic(fifo, "through the pipe")
    reader.join(timeout=10)
    assert received == ["through the pipe"]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_stale_temp_files_of_dead_writers_are_removed_on_the_next_write(tmp_path):
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    dead_pid = int(dead.stdout)
    stale = tmp_path / f".r.json.{dead_pid}.abc123.tmp"
    alive = tmp_path / f".r.json.{os.getppid()}.def456.tmp"  # a live writer: kept
    old_unknown = tmp_path / ".r.json.x1y2z3w4.tmp"  # no pid, older than an hour: stale
    other = tmp_path / ".other.json.1.abc.tmp"  # another file's: not ours to judge
    for path in (stale, alive, old_unknown, other):
        path.write_text("half")
    os.utime(old_unknown, (time.time() - 7200, time.time() - 7200))
    write_atomic(tmp_path / "r.json", "whole")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([alive.name, other.name, "r.json"])


@pytest.mark.parametrize(
    ("make", "path", "expected"),
    [
        (lambda t: None, "", "empty file path"),
        (lambda t: (t / "d").mkdir(), "{t}/d", "it is a folder"),
        (lambda t: None, "{t}/no/x.json", "the folder {t}/no does not exist"),
        (lambda t: (t / "f").write_text("x"), "{t}/f/x.json", "{t}/f is not a folder"),
    ],
)
def test_check_writable_refuses_without_touching_anything(tmp_path, make, path, expected):
    make(tmp_path)
    before = sorted((p.name, p.stat().st_mtime_ns) for p in tmp_path.iterdir())
    with pytest.raises(UnwritablePath, match=re.escape(expected.replace("{t}", str(tmp_path)))):
        check_writable(path.replace("{t}", str(tmp_path)))
    assert sorted((p.name, p.stat().st_mtime_ns) for p in tmp_path.iterdir()) == before


def test_check_writable_accepts_devices_links_and_new_files(tmp_path):
    (tmp_path / "real").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    for path in ("/dev/null", "/dev/stdout", tmp_path / "link", tmp_path / "new.json"):
        check_writable(str(path))


def test_the_fallback_keeps_data_in_the_first_folder_that_takes_it(tmp_path, monkeypatch):
    monkeypatch.setenv(FALLBACK_DIR_ENV, str(tmp_path / "fallback"))
    kept = save_fallback('{"a": 1}', "result.json")
    assert kept.parent == tmp_path / "fallback"
    assert kept.name.startswith("result-") and kept.suffix == ".json"
    assert kept.read_text() == '{"a": 1}'
    again = save_fallback("second", "result.json")
    assert again != kept and again.read_text() == "second"


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("r\x00.json", "a path cannot contain a NUL character"),
        ("newdir/", "it ends in '/': it names a folder, not a file"),
        ("adir/", "it is a folder"),
    ],
)
def test_a_path_no_file_can_have_is_an_oserror_and_nothing_is_written(tmp_path, name, words):
    (tmp_path / "adir").mkdir()
    with pytest.raises(OSError) as caught:
        write_atomic(f"{tmp_path}/{name}", "{}")
    assert caught.value.strerror == words
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir"]
    assert list((tmp_path / "adir").iterdir()) == []


def test_check_writable_refuses_a_file_path_ending_in_a_separator(tmp_path):
    with pytest.raises(UnwritablePath) as caught:
        check_writable(f"{tmp_path}/newdir/")
    assert str(caught.value) == (
        f"cannot write {tmp_path}/newdir/: it ends in '/': it names a folder, not a file"
    )
    check_writable(f"{tmp_path}/newdir/", "folder")  # a report folder may end in one
    assert list(tmp_path.iterdir()) == []

import os
import stat

import pytest

from autocast_explorer.core.documents.files import write_atomic


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

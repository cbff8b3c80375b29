"""Outputs that can block, collide or be lost: FIFOs, names over the file system's limit,
symbolic link loops, a report link, two outputs on one file, a file inside the report folder,
and a failure or a signal between two outputs. Each ends in one line and a documented exit
code, with all of a run's outputs or none of them and no temporary file left.
"""

from __future__ import annotations

import errno
import json
import os
import threading
import time
from pathlib import Path

import pytest

from autocast_explorer.cli import main
from autocast_explorer.cli.signals import Interrupted
from autocast_explorer.core.documents import files as files_module
from autocast_explorer.core.documents.files import (
    FALLBACK_DIR_ENV,
    UnwritablePath,
    check_writable,
    not_a_regular_file,
    stage,
    write_atomic,
    write_stream,
)
from tests.fuzz.conftest import snapshot

FAST = ["--min-time", "0.01", "--widths", "8,4", "--batch", "2", "--threads", "1"]
COMMANDS = {
    "run": ["run", *FAST],
    "sweep": ["sweep", *FAST, "--values", "1,2", "--no-onednn"],
}
LONG = "a" * 300


@pytest.fixture
def fallback(tmp_path, monkeypatch) -> Path:
    folder = tmp_path.parent / f"{tmp_path.name}-fallback"
    monkeypatch.setenv(FALLBACK_DIR_ENV, str(folder))
    return folder


def _no_temps(folder: Path) -> None:
    left = [p.name for p in folder.rglob("*") if p.name.endswith(".tmp")]
    assert left == []


def _never_measure(monkeypatch) -> None:
    import autocast_explorer.core.experiment.engine as engine
    import autocast_explorer.core.sweeps.runner as runner

    def never(*_args, **_kwargs):
        raise AssertionError("measured although an output was refused")

    monkeypatch.setattr(engine, "run_experiment", never)
    monkeypatch.setattr(runner, "run_spec", never)


# ---- refused before measuring --------------------------------------------------------------
REFUSED = [
    (["--json", "{tmp}/" + LONG + ".json"], "bytes long, over the file system's limit of"),
    (["--csv", "{tmp}/" + LONG + ".csv"], "bytes long, over the file system's limit of"),
    (["--json", "{tmp}/" + LONG + "/r.json"], "over the file system's limit"),
    (["--json", "{tmp}/loop"], "symbolic link loop"),
    (["--csv", "{tmp}/loop"], "symbolic link loop"),
    (["--json", "{tmp}/same", "--csv", "{tmp}/same"], "--json and --csv name the same file"),
    (["--json", "{tmp}/same", "--csv", "{tmp}/./same"], "--json and --csv name the same file"),
]
RUN_ONLY = [
    (["--report", "{tmp}/" + LONG], "over the file system's limit"),
    (["--report", "{tmp}/loop"], "symbolic link loop"),
    (["--report", "{tmp}/afile"], "a file of that name exists"),
    (["--report", "{tmp}/rep", "--csv", "{tmp}/rep/x.csv"], "--csv {tmp}/rep/x.csv is inside"),
    (["--report", "{tmp}/rep", "--json", "{tmp}/rep/r.json"], "--json {tmp}/rep/r.json is inside"),
    (["--report", "{tmp}/rep/", "--json", "{tmp}/rep/sub/r.json"], "is inside the --report"),
    (["--report", "{tmp}/rep", "--csv", "{tmp}/replica.csv"], None),  # a sibling, not inside
]


def _cases():
    for name in COMMANDS:
        for argv, expected in REFUSED:
            yield name, argv, expected
    for argv, expected in RUN_ONLY:
        yield "run", argv, expected


@pytest.mark.parametrize(
    ("command", "argv", "expected"),
    list(_cases()),
    ids=[f"{c}-{' '.join(a)[:40]}" for c, a, _ in _cases()],
)
def test_a_bad_output_is_refused_before_measuring(
    command, argv, expected, tmp_path, monkeypatch, capsys
):
    (tmp_path / "afile").write_text("mine")
    (tmp_path / "loop").symlink_to("loop")
    before = snapshot(tmp_path)
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    if expected is None:  # accepted: then it measures and writes
        assert main([*COMMANDS[command], *args]) == 0
        assert (tmp_path / "replica.csv").is_file() and (tmp_path / "rep" / "result.json").is_file()
        return
    _never_measure(monkeypatch)
    code = main([*COMMANDS[command], *args])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert expected.replace("{tmp}", str(tmp_path)) in err
    assert len(err) < 700  # a 300-letter name is shown cut, not whole
    assert out == ""
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("name_bytes", [200, 230, 255])
def test_a_name_at_the_limit_is_written_with_its_temporary_file(tmp_path, name_bytes):
    """The temporary name adds ~25 bytes: it is cut so that a 255-byte name still works."""
    target = tmp_path / ("b" * (name_bytes - 5) + ".json")
    write_atomic(target, "{}")
    assert target.read_text() == "{}"
    _no_temps(tmp_path)


@pytest.mark.parametrize("text", ["", "   ", "x\x00y"])
def test_check_writable_refuses_empty_and_nul(text):
    with pytest.raises(UnwritablePath):
        check_writable(text)


# ---- FIFOs and devices -----------------------------------------------------------------------
def test_a_fifo_nobody_reads_fails_at_once_and_keeps_the_result(tmp_path, fallback, capsys):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    started = time.monotonic()
    code = main([*COMMANDS["run"], "--csv", str(fifo)])
    err = capsys.readouterr().err
    assert code == 1
    assert time.monotonic() - started < 120  # not an endless wait (the run itself is short)
    assert f"error: cannot write {fifo}: no process is reading it" in err
    kept = Path(err.split("the result was saved to ")[1].split(" instead")[0])
    assert json.loads(kept.read_text())["schema"] == "autocast-explorer/result/1"
    assert fifo.exists() and not fifo.is_file()  # still a FIFO, not replaced


def test_a_fifo_with_a_reader_gets_the_whole_text(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    received = []

    def read() -> None:
        with open(fifo, "rb") as handle:
            received.append(handle.read())

    reader = threading.Thread(target=read)
    reader.start()
    payload = b"x" * 300_000  # more than a pipe holds: written as the reader takes it
    for _ in range(200):
        try:
            write_stream(fifo, payload)
            break
        except OSError as exc:  # the reader has not opened it yet
            assert exc.errno == errno.ENXIO
            time.sleep(0.01)
    reader.join(10)
    assert received == [payload]


def test_a_fifo_whose_reader_stops_is_given_up(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    held = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader that never reads
    try:
        started = time.monotonic()
        with pytest.raises(OSError, match=r"nothing was read from it for 0\.2 s"):
            write_stream(fifo, b"y" * 1_000_000, stall_s=0.2)
        assert time.monotonic() - started < 30
    finally:
        os.close(held)


def test_a_signal_during_a_blocked_stream_write_is_honoured(tmp_path):
    """The wait is short selects: a signal handler that raises ends the write."""
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    held = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    calls = []
    real_select = files_module.select.select

    def select(r, w, x, timeout):
        calls.append(timeout)
        if len(calls) == 3:
            raise Interrupted(2)  # what the CLI's handler raises on Ctrl-C
        return real_select(r, w, x, timeout)

    try:
        files_module.select.select = select
        with pytest.raises(Interrupted):
            write_stream(fifo, b"z" * 1_000_000, stall_s=60)
    finally:
        files_module.select.select = real_select
        os.close(held)
    assert calls and all(t <= 0.1 for t in calls)


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda p: os.mkfifo(p), "is a FIFO (a named pipe), not a file"),
        (lambda p: p.symlink_to(p.name), "is a symbolic link loop"),
        (lambda p: p.mkdir(), "is a folder, not a file"),
        (lambda p: None, "no such file"),
        (lambda p: p.symlink_to("/dev/zero"), "is a device or socket, not a file"),
        (lambda p: p.write_text("{}"), ""),
    ],
)
def test_what_cannot_be_read_as_a_document_is_named_without_opening_it(tmp_path, make, expected):
    path = tmp_path / "p.json"
    make(path)
    assert not_a_regular_file(path) == expected


@pytest.mark.parametrize("kind", ["fifo", "loop", "zero"])
def test_preset_from_a_fifo_device_or_loop_is_named(tmp_path, monkeypatch, capsys, kind):
    monkeypatch.chdir(tmp_path)
    if kind == "fifo":
        os.mkfifo("p")
        arg, expected = "p", "is a FIFO"
    elif kind == "loop":
        os.symlink("p", "p")
        arg, expected = "p", "is a symbolic link loop"
    else:
        arg, expected = "/dev/zero", "is a device or socket"
    _never_measure(monkeypatch)
    assert main(["run", "--preset", arg]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: preset: {arg}: {expected}")


# ---- links -----------------------------------------------------------------------------------
def test_a_report_link_stays_a_link_and_leaves_no_temporary(tmp_path, capsys):
    old = tmp_path / "old-report"
    assert main([*COMMANDS["run"], "--report", str(old)]) == 0
    link = tmp_path / "LINK"
    link.symlink_to(old.name)
    assert main([*COMMANDS["run"], "--report", str(link), "--seed", "7"]) == 0
    capsys.readouterr()
    assert link.is_symlink() and os.readlink(link) == old.name
    assert json.loads((old / "result.json").read_text())["config"]["seed"] == 7
    assert sorted(p.name for p in tmp_path.iterdir()) == ["LINK", "old-report"]


def test_a_json_link_is_written_through(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real.name)
    assert main([*COMMANDS["run"], "--json", str(link)]) == 0
    assert link.is_symlink() and json.loads(real.read_text())["schema"].startswith("autocast")


# ---- all outputs or none ---------------------------------------------------------------------
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_failed_output_publishes_none_and_keeps_the_measurement(
    command, tmp_path, fallback, capsys
):
    json_path = tmp_path / "r.json"
    code = main([*COMMANDS[command], "--json", str(json_path), "--csv", "/dev/full"])
    err = capsys.readouterr().err
    assert code == 1
    assert "cannot write /dev/full: No space left on device (so none of the other" in err
    assert not json_path.exists()
    kept = Path(err.split("the result was saved to ")[1].split(" instead")[0])
    assert json.loads(kept.read_text())["schema"].startswith("autocast-explorer/")
    _no_temps(tmp_path)


@pytest.mark.parametrize("which", [0, 1, 2])
def test_a_signal_between_two_outputs_leaves_none(tmp_path, monkeypatch, capsys, which):
    """Ctrl-C while the JSON, the CSV or the report is being written aside: nothing is
    published, no temporary file stays, exit 130."""
    calls = []
    real_stage = files_module.stage

    def stage_then_interrupt(path, data):
        calls.append(path)
        if len(calls) > which:
            raise Interrupted(2)
        return real_stage(path, data)

    import autocast_explorer.core.documents.files as files

    monkeypatch.setattr(files, "stage", stage_then_interrupt)
    outputs = ["--json", str(tmp_path / "r.json"), "--csv", str(tmp_path / "r.csv")]
    if which == 2:
        outputs += ["--report", str(tmp_path / "rep")]
        import autocast_explorer.core.reports.report as report

        def report_interrupted(*_args, **_kwargs):
            raise Interrupted(2)

        monkeypatch.setattr(report, "stage_report", report_interrupted)
        import autocast_explorer.gui.charts.report_charts as charts

        monkeypatch.setattr(charts, "stage_report_with_charts", report_interrupted)
    code = main([*COMMANDS["run"], *outputs])
    assert code == 130
    assert capsys.readouterr().err == "interrupted\n"
    assert list(tmp_path.iterdir()) == []


def test_stage_then_discard_leaves_nothing(tmp_path):
    staged = stage(tmp_path / "a.json", "{}")
    assert staged.temp is not None and staged.temp.exists()
    staged.discard()
    assert list(tmp_path.iterdir()) == []
    staged.publish()  # nothing left to publish: a no-op
    assert list(tmp_path.iterdir()) == []


def test_the_window_never_waits_on_a_fifo(qtbot, explorer_user_files, tmp_path, good_result):
    """Saving runs on the GUI thread: a FIFO without a reader fails at once, one whose
    reader stops is given up after a second; the banner says which."""
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.gui import MainWindow

    window = MainWindow(autoload=False)
    qtbot.addWidget(window)
    window.last_result = ExperimentResult.from_json(json.dumps(good_result))
    fifo = tmp_path / "f.json"
    os.mkfifo(fifo)
    assert window.save_result(fifo) is False
    assert "no process is reading it" in window.messageBanner.text()
    held = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        started = time.monotonic()
        assert window.write_file(fifo, b"w" * 2_000_000, "the test data") is False
        assert time.monotonic() - started < 20
        assert "nothing was read from it for 1 s" in window.messageBanner.text()
    finally:
        os.close(held)
    assert fifo.exists() and not fifo.is_file()

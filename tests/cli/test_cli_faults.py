"""Faults after the input was accepted: outputs that fail at the end keep the measurement in a
fallback file the message names; devices and /dev/stdout are written, not replaced; memory
running out is one line; --reset-settings rescues a window that cannot start."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from autocast_explorer.cli import main
from autocast_explorer.core.documents.files import FALLBACK_DIR_ENV

FAST = ["--min-time", "0.01", "--widths", "8,4", "--batch", "2"]


@pytest.fixture
def fallback(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "fallback"
    monkeypatch.setenv(FALLBACK_DIR_ENV, str(folder))
    return folder


@pytest.mark.parametrize("command", [["run"], ["sweep", "--values", "1,2", "--no-onednn"]])
def test_a_full_device_at_the_end_keeps_the_result_in_a_fallback_file(command, fallback, capsys):
    code = main([*command, *FAST, "--json", "/dev/full"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1
    assert err.startswith("error: cannot write /dev/full: No space left on device; ")
    kept = err.split("the result was saved to ")[1].split(" instead")[0]
    assert Path(kept).parent == fallback
    assert Path(kept).name.startswith("sweep-" if command[0] == "sweep" else "result-")
    doc = json.loads(Path(kept).read_text())
    assert doc["schema"].startswith("autocast-explorer/")
    assert doc["config"]["widths"] == [8, 4]
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


@pytest.mark.parametrize(
    ("command", "kind"),
    [(["run"], "result"), (["sweep", "--values", "1,2", "--no-onednn"], "sweep")],
)
def test_a_failed_csv_keeps_the_whole_measurement_as_json(command, kind, fallback, capsys):
    assert main([*command, *FAST, "--csv", "/dev/full"]) == 1
    err = capsys.readouterr().err
    kept = Path(err.split("the result was saved to ")[1].split(" instead")[0])
    assert kept.name.startswith(f"{kind}-") and kept.suffix == ".json"
    assert json.loads(kept.read_text())["schema"] == f"autocast-explorer/{kind}/1"


def test_ops_to_a_full_device_keeps_the_probe(fallback, capsys):
    assert main(["ops", "--threads", "1", "--json", "/dev/full"]) == 1
    err = capsys.readouterr().err
    kept = Path(err.split("the result was saved to ")[1].split(" instead")[0])
    assert kept.name.startswith("probe-")
    assert json.loads(kept.read_text())["dtype"] == "bfloat16"


def test_csv_to_dev_stdout_reaches_stdout(capfd):
    assert main(["run", *FAST, "--csv", "/dev/stdout", "--json", "/dev/null"]) == 0
    out = capfd.readouterr().out
    assert out.splitlines()[0].startswith("mode,dtype,median_ms")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_an_unwritable_output_is_refused_before_any_measuring(tmp_path, monkeypatch, capsys):
    import autocast_explorer.core.experiment.engine as engine
    import autocast_explorer.core.sweeps.runner as runner

    def never(*_args, **_kwargs):
        raise AssertionError("measured although the output cannot be written")

    monkeypatch.setattr(engine, "run_experiment", never)
    monkeypatch.setattr(runner, "run_spec", never)
    for argv in (
        ["run", *FAST, "--json", str(tmp_path / "missing" / "r.json")],
        ["run", *FAST, "--report", str(tmp_path / "missing" / "report")],
        ["sweep", *FAST, "--csv", str(tmp_path)],
    ):
        assert main(argv) == 2
        assert "cannot write" in capsys.readouterr().err


def test_a_read_only_mount_is_refused_before_measuring(tmp_path, monkeypatch, capsys):
    """A read-only file system refuses even root; statvfs reports it as this one would."""
    real = os.statvfs

    class ReadOnly:
        def __init__(self, result):
            self._result = result
            self.f_flag = result.f_flag | os.ST_RDONLY

    monkeypatch.setattr(os, "statvfs", lambda path: ReadOnly(real(path)))
    assert main(["run", *FAST, "--json", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert f"error: --json: cannot write {tmp_path / 'r.json'}: {tmp_path} is on a read-only" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.process
def test_out_of_memory_is_one_line_naming_the_guard_estimate(tmp_path):
    """Address space limited to what torch needs plus 1 GiB; widths 16384×3 need ~3 GiB."""
    script = textwrap.dedent(
        """
        import resource, sys
        import torch
        from autocast_explorer.cli import main
        with open("/proc/self/status") as f:
            vm = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (vm + 2**30, resource.RLIM_INFINITY))
        sys.exit(main(["run", "--widths", "16384,16384,16384", "--batch", "8",
                       "--min-time", "0.01", "--threads", "1", "--allow-slow"]))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("error: out of memory: ")
    assert "the memory guard estimated a peak of" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_reset_settings_forgets_everything_without_a_window(tmp_path, monkeypatch, capsys):
    from autocast_explorer.gui.window.settings import CONFIG_KEY, SETTINGS_ENV, open_settings

    path = tmp_path / "settings.ini"
    monkeypatch.setenv(SETTINGS_ENV, str(path))
    store = open_settings()
    store.setValue(CONFIG_KEY, "[" * 8000)
    store.sync()
    assert main(["--reset-settings"]) == 0
    assert str(path) in capsys.readouterr().out
    assert open_settings().value(CONFIG_KEY) is None

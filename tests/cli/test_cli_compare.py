"""`autocast-explorer compare`: a side-by-side table, or exit 2 with one `error:` line."""

import json
import os

import pytest

from autocast_explorer.cli import main
from autocast_explorer.core.documents.reader import MAX_DOCUMENT_BYTES as MAX_RESULT_BYTES
from autocast_explorer.core.experiment.interval import ratio_text
from tests.steady_clock import clear_timing

FAST = ["--min-time", "0.02"]


@pytest.fixture(scope="module")
def result_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("compare") / "laptop.json"
    with clear_timing(0.5):  # a clear call whatever the machine's load: its figure is shown
        assert main(["run", "--widths", "32,16,4", "--batch", "8", "--json", str(path), *FAST]) == 0
    return path


def test_compare_prints_both_machines(result_file, tmp_path, capsys):
    data = json.loads(result_file.read_text())
    data["environment"]["cpu_model"] = "Apple M3 Pro"
    data["environment"]["threads"] = 11
    data["latency"]["autocast"]["median_ms"] = data["latency"]["plain"]["median_ms"] * 4
    # Written before intervals: its speedup is the ratio of its two medians.
    for key in ("speedup_interval", "stalls", "load", "stopped", "target", "blocks"):
        data["latency"].pop(key, None)
    other = tmp_path / "colleague.json"
    other.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["compare", str(result_file), str(other)]) == 0
    out = capsys.readouterr().out
    lines = {line.split("  ")[0]: line for line in out.splitlines() if line}
    original = json.loads(result_file.read_text())
    assert original["environment"]["cpu_model"] in lines["CPU"]
    assert "Apple M3 Pro" in lines["CPU"]
    assert lines["threads"].split()[1:] == [str(original["environment"]["threads"]), "11"]
    # Each speedup is followed by its run's interval where the file has one (the interval
    # words are checked in tests/core/test_certainty.py).
    cells = lines["speedup"].split()
    assert cells[1] == f"{ratio_text(original['latency']['speedup'])}×" and "0.25×" in cells[2:]
    assert "laptop.json" in lines["file"] and "colleague.json" in lines["file"]


def _cases(good: str) -> dict:
    foreign = json.loads(good)
    foreign["schema"] = "someone-else/result/1"
    truncated = good[: len(good) // 2]
    return {
        "empty.json": ("", "empty.json: result: file is empty"),
        "truncated.json": (truncated, "truncated.json: result: not valid JSON"),
        "foreign.json": (json.dumps(foreign), "foreign.json: result: schema: expected"),
        "list.json": ("[1, 2]", "list.json: result: document: expected a JSON object"),
        "sweep.json": (
            '{"schema": "autocast-explorer/sweep/1", "points": []}',
            "sweep.json: is a sweep file; compare takes result files",
        ),
        "nonsense.json": ("\x00\x01 hello", "nonsense.json: result: not valid JSON"),
    }


@pytest.mark.parametrize(
    "name",
    ["empty.json", "truncated.json", "foreign.json", "list.json", "sweep.json", "nonsense.json"],
)
def test_bad_files_exit_2_with_one_line(result_file, tmp_path, capsys, name):
    content, message = _cases(result_file.read_text())[name]
    path = tmp_path / name
    path.write_text(content)
    capsys.readouterr()
    assert main(["compare", str(result_file), str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"error: {tmp_path}/{message}")
    assert captured.err.count("\n") == 1
    assert "Traceback" not in captured.err


def test_missing_oversized_binary_and_folder_inputs(result_file, tmp_path, capsys):
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:  # sparse: no disk space used
        handle.truncate(MAX_RESULT_BYTES + 1)
    binary = tmp_path / "image.json"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    cases = [
        (tmp_path / "missing.json", "missing.json: no such file"),
        (huge, "huge.json: result: file is larger than 32 MB"),
        (binary, "image.json: result: not a text file (not UTF-8: byte 0x89 at 0)"),
        (tmp_path, f"{tmp_path.name}: is not a file"),
    ]
    for path, message in cases:
        capsys.readouterr()
        assert main(["compare", str(result_file), str(path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err, err
        assert err.count("\n") == 1
    assert os.path.getsize(huge) == MAX_RESULT_BYTES + 1


def test_compare_needs_at_least_one_file(capsys):
    assert main(["compare"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: the following arguments are required: RESULT.json")


def test_compare_shows_a_run_whose_autocast_forward_raised(result_file, tmp_path, capsys):
    from tests.autocast_failure import MESSAGE, failing_result

    with pytest.MonkeyPatch.context() as patch:
        failed = failing_result(patch)
    path = tmp_path / "lstm-avx2.json"
    path.write_text(failed.to_json())
    capsys.readouterr()
    assert main(["compare", str(result_file), str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    lines = {line.split("  ")[0]: line for line in captured.out.splitlines() if line}
    original = json.loads(result_file.read_text())
    cells = lines["speedup"].split()
    assert cells[1] == f"{ratio_text(original['latency']['speedup'])}×" and cells[-1] == "—"
    assert lines["predictions agree"].split()[-1] == "—"
    assert f"raised: RuntimeError: {MESSAGE}"[:43] in lines["autocast median"]
    assert lines["plain median"].split()[-2:] == [f"{failed.plain.median_ms:.3f}", "ms"]


def test_an_accuracy_over_one_is_refused_not_shown_as_200_percent(tmp_path, capsys):
    path = tmp_path / "trained.json"
    argv = ["run", "--mode", "train", "--widths", "8,6,4", "--steps", "4", "--batch", "4"]
    assert main([*argv, "--json", str(path), *FAST]) == 0
    data = json.loads(path.read_text())
    assert 0 <= data["train"]["accuracy"]["plain"] <= 1
    data["train"]["accuracy"]["plain"] = 2.0
    path.write_text(json.dumps(data))
    capsys.readouterr()
    assert main(["compare", str(path)]) == 2
    out, err = capsys.readouterr()
    assert err == f"error: {path}: result: train.accuracy.plain: expected a number in 0 … 1\n"
    assert "200.0%" not in out

"""`autocast-explorer run --report DIR` writes the report folder beside the usual output."""

import json

from autocast_explorer.cli import main

TINY = ["--widths", "32,16,4", "--batch", "8", "--min-time", "0.02"]


def test_run_report_writes_the_folder(tmp_path, capsys):
    folder = tmp_path / "report"
    assert main(["run", *TINY, "--report", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "Verdict:" in out
    assert f"Report written to {folder}: result.json, result.csv, reproduce.py, report.md" in out
    assert sorted(p.name for p in folder.iterdir()) == [
        "report.md",
        "reproduce.py",
        "result.csv",
        "result.json",
    ]
    data = json.loads((folder / "result.json").read_text())
    assert data["config"]["widths"] == [32, 16, 4]
    assert (
        "| fc1 | Linear | 8×16 | float32 → float32 | float32 → bfloat16 |"
        in (folder / "report.md").read_text()
    )


def test_report_with_json_on_stdout_keeps_stdout_clean(tmp_path, capsys):
    assert main(["run", *TINY, "--json", "-", "--report", str(tmp_path / "r")]) == 0
    assert json.loads(capsys.readouterr().out)["schema"] == "autocast-explorer/result/1"
    assert (tmp_path / "r" / "report.md").is_file()


def test_report_into_a_file_is_one_error_line(tmp_path, capsys):
    blocker = tmp_path / "taken"
    blocker.write_text("a file, not a folder")
    assert main(["run", *TINY, "--report", str(blocker)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot write report to {blocker}: ")
    assert err.count("\n") == 1

"""`autocast-explorer run --report DIR` writes the report folder beside the usual output."""

import json
import os
import subprocess
import sys

import pytest

from autocast_explorer.cli import main

TINY = ["--widths", "32,16,4", "--batch", "8", "--min-time", "0.02"]


CHART_FILES = ["latency.png", "dtypes.png", "agreement.png"]


def test_run_report_writes_the_folder(tmp_path, capsys):
    folder = tmp_path / "report"
    assert main(["run", *TINY, "--report", str(folder)]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "Verdict:" in out
    assert (
        f"Report written to {folder}: result.json, result.csv, reproduce.py, "
        "latency.png, dtypes.png, agreement.png, report.md" in out
    )
    assert "no chart images" not in captured.err
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["report.md", "reproduce.py", "result.csv", "result.json", *CHART_FILES]
    )
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
    assert err.startswith(f"error: --report: cannot write the folder {blocker}: ")
    assert err.count("\n") == 1


def png_colors(path) -> set[str]:
    from PySide6.QtGui import QImage

    image = QImage(str(path))
    assert not image.isNull(), path
    return {
        image.pixelColor(x, y).name()
        for x in range(0, image.width(), 2)
        for y in range(0, image.height(), 2)
    }


def test_run_report_draws_the_charts_of_the_result(tmp_path, capsys):
    from autocast_explorer.gui.shell import style

    folder = tmp_path / "r"
    assert main(["run", *TINY, "--dtype", "float16", "--report", str(folder)]) == 0
    markdown = (folder / "report.md").read_text()
    for title, name in zip(
        ("Latency per forward", "Dtype per layer", "Prediction agreement"), CHART_FILES, strict=True
    ):
        assert f"![{title}]({name})" in markdown
        assert (folder / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The dtype chart of a float16 run: float32 cells (plain) and float16 cells (Linear layers).
    colors = png_colors(folder / "dtypes.png")
    assert {style.dtype_color("float32"), style.dtype_color("float16")} <= colors
    assert style.dtype_color("bfloat16") not in colors


def test_run_report_without_qt_writes_the_rest_and_says_so(tmp_path, capsys, monkeypatch):
    from autocast_explorer.gui.charts import report_charts

    def no_qt(result, folder):
        raise ImportError("libEGL.so.1: cannot open shared object file")

    monkeypatch.setattr(report_charts, "render_chart_pngs", no_qt)
    folder = tmp_path / "r"
    assert main(["run", *TINY, "--report", str(folder)]) == 0
    err = capsys.readouterr().err
    assert err == (
        "note: the report has no chart images: Qt could not be loaded "
        "(libEGL.so.1: cannot open shared object file)\n"
    )
    assert sorted(p.name for p in folder.iterdir()) == [
        "report.md",
        "reproduce.py",
        "result.csv",
        "result.json",
    ]
    assert "## Charts" not in (folder / "report.md").read_text()


@pytest.mark.process
def test_run_report_in_a_fresh_process_without_a_display(tmp_path):
    """What a headless server does: no DISPLAY, no QT_QPA_PLATFORM; the PNGs still come."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "QT_QPA_PLATFORM")}
    env["WAYLAND_DISPLAY"] = ""
    folder = tmp_path / "server-report"
    out = subprocess.run(
        [sys.executable, "-m", "autocast_explorer", "run", *TINY, "--report", str(folder)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "no chart images" not in out.stderr
    for name in CHART_FILES:
        assert (folder / name).read_bytes()[:4] == b"\x89PNG"


def test_training_report_carries_the_loss_chart(tmp_path, capsys):
    from PySide6.QtGui import QImage

    folder = tmp_path / "trained"
    args = ["run", *TINY, "--mode", "train", "--steps", "6", "--threads", "1"]
    assert main([*args, "--report", str(folder)]) == 0
    capsys.readouterr()
    assert (folder / "loss.png").is_file()
    md = (folder / "report.md").read_text()
    assert "![Training loss per step](loss.png)" in md
    image = QImage(str(folder / "loss.png"))
    assert image.width() > 600 and not image.isNull()
    # The curves are drawn: some pixel carries the float32 colour.
    colours = {
        image.pixelColor(x, y).name()
        for x in range(0, image.width(), 3)
        for y in range(0, image.height(), 3)
    }
    assert "#3465a4" in colours


FAMILY_ARGS = {
    "cnn": ["--model", "cnn", "--channels", "3,8,8", "--image", "8"],
    "transformer": ["--model", "transformer", "--d-model", "16", "--heads", "2", "--seq", "6"],
    "rnn": ["--model", "rnn", "--cell", "gru", "--features", "8", "--hidden", "16", "--seq", "5"],
}


@pytest.mark.parametrize("model", sorted(FAMILY_ARGS))
def test_run_report_covers_every_model_family(model, tmp_path, capsys):
    from autocast_explorer.gui.shell import style

    folder = tmp_path / model
    args = ["run", *FAMILY_ARGS[model], "--batch", "3", "--min-time", "0.02"]
    assert main([*args, "--report", str(folder)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["report.md", "reproduce.py", "result.csv", "result.json", *CHART_FILES]
    )
    data = json.loads((folder / "result.json").read_text())
    assert data["config"]["model"] == model
    markdown = (folder / "report.md").read_text()
    title = {"cnn": "CNN", "transformer": "Transformer", "rnn": "RNN"}[model]
    assert f"| model | {title} |" in markdown
    assert f"| {data['layers'][0]['name']} |" in markdown
    # The dtype chart draws this family's layers in the dtypes they ran in.
    measured = {layer["autocast"]["out"] for layer in data["layers"] if layer["autocast"]}
    colors = png_colors(folder / "dtypes.png")
    assert {style.dtype_color(d) for d in measured | {"float32"}} <= colors


def test_run_report_of_a_failed_autocast_forward_leads_with_the_finding(
    tmp_path, capsys, monkeypatch
):
    from autocast_explorer.core.experiment.families import FAMILIES
    from autocast_explorer.gui.shell import style
    from tests.autocast_failure import MESSAGE, refusing_mlp

    monkeypatch.setattr(FAMILIES["mlp"], "build_model", refusing_mlp)
    folder = tmp_path / "finding"
    assert main(["run", *TINY, "--report", str(folder)]) == 0
    captured = capsys.readouterr()
    assert "no report" not in captured.err and captured.err == ""
    assert f"Report written to {folder}" in captured.out
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["report.md", "reproduce.py", "result.csv", "result.json", *CHART_FILES]
    )
    markdown = (folder / "report.md").read_text()
    assert markdown.index("## Finding: bfloat16 autocast could not run") < markdown.index(
        "## Experiment"
    )
    assert MESSAGE in markdown
    # The latency chart draws the float32 bar only.
    colors = png_colors(folder / "latency.png")
    assert style.dtype_color("float32") in colors
    assert style.dtype_color("bfloat16") not in colors

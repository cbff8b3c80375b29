"""File › Compare runs…: results from two machines overlaid; bad files named, never a crash."""

from __future__ import annotations

import json

import pytest
from PySide6.QtWidgets import QFileDialog, QLabel, QMainWindow

from autocast_explorer.core.experiment.interval import ratio_text
from autocast_explorer.core.learning.compare import ResultFileError
from autocast_explorer.gui.features.compare.window import CompareWindow
from autocast_explorer.gui.shell import style
from tests.gui.helpers import run_to_end

SERVER_CPU = "Intel(R) Xeon(R) Platinum 8480+"


def as_other_machine(text: str) -> str:
    """The same result as if measured on a 56-thread AMX server, with its own timings."""
    data = json.loads(text)
    env = data["environment"]
    env["cpu_model"] = SERVER_CPU
    env["threads"] = 56
    env["torch_version"] = "2.5.1+cpu"
    env["cpu_flags"] = sorted({*env["cpu_flags"], "amx_bf16", "amx_tile"})
    plain, auto = data["latency"]["plain"], data["latency"]["autocast"]
    plain.update(median_ms=2.0, p25_ms=1.9, p75_ms=2.2)
    auto.update(median_ms=0.5, p25_ms=0.45, p75_ms=0.6)
    data["latency"]["speedup"] = 4.0
    # A quiet server's interval around its 4.0× (the laptop's own is whatever it measured).
    data["latency"]["speedup_interval"] = {"low": 3.9, "high": 4.1, "level": 0.95, "pairs": 20}
    # ... on a machine of its own: none of this run's stalls or other programs' load.
    data["latency"]["stalls"] = []
    data["latency"]["load"] = None
    return json.dumps(data)


def speed_label(result) -> str:
    """The compare chart's label: the figure of a run whose call is clear."""
    assert result.speed_call.graded and not result.speed_call.rough
    return f"{ratio_text(result.speedup)}×"


@pytest.fixture
def two_files(window, qtbot, tmp_path, timing_noise):
    timing_noise.clear(0.6)  # the laptop's run is clear whatever the machine's load
    result = run_to_end(qtbot, window)
    laptop = tmp_path / "laptop.json"
    laptop.write_text(result.to_json())
    server = tmp_path / "server.json"
    server.write_text(as_other_machine(result.to_json()))
    window.clear_results()  # so Compare starts with just the files
    return result, laptop, server


def open_compare(window, qtbot, monkeypatch, paths) -> CompareWindow:
    monkeypatch.setattr(
        QFileDialog, "getOpenFileNames", lambda *a, **k: ([str(p) for p in paths], "")
    )
    window.compareAction.trigger()
    compare = window.findChild(QMainWindow, "compareWindow")
    qtbot.waitUntil(compare.isVisible, timeout=5000)
    return compare


def test_two_machines_are_overlaid_with_their_labels(window, qtbot, monkeypatch, two_files):
    result, laptop, server = two_files
    compare = open_compare(window, qtbot, monkeypatch, [laptop, server])
    here = result.environment
    here_label = f"{here.cpu_model} · torch {here.torch_version} · {here.threads} thr"
    server_label = f"{SERVER_CPU} · torch 2.5.1+cpu · 56 thr"
    assert compare.labels() == [here_label, server_label]
    assert not compare.findChild(QLabel, "compareMessage").isVisible()

    drawn = compare.latencyChart.drawn()
    assert drawn["heights"] == pytest.approx(
        [result.plain.median_ms, result.autocast.median_ms, 2.0, 0.5]
    )
    assert drawn["whisker_bottom"] == pytest.approx(
        [result.plain.p25_ms, result.autocast.p25_ms, 1.9, 0.45]
    )
    assert drawn["whisker_top"] == pytest.approx(
        [result.plain.p75_ms, result.autocast.p75_ms, 2.2, 0.6]
    )
    assert drawn["x"] == pytest.approx([-0.2, 0.2, 0.8, 1.2])
    assert drawn["colors"] == [style.dtype_color(d) for d in ("float32", "bfloat16") * 2]
    assert drawn["legend"] == ["plain · float32", "autocast · bfloat16"]
    assert drawn["labels"][1] == f"{SERVER_CPU}\ntorch 2.5.1+cpu\n56 thr"
    assert drawn["labels"][0].endswith(f"torch {here.torch_version}\n{here.threads} thr")

    speed = compare.speedupChart.drawn()
    assert speed["speedups"] == pytest.approx([result.speedup, 4.0])
    assert speed["value_labels"] == [speed_label(result), "4.00×"]
    assert speed["colors"][1] == style.OK

    rows = dict((row[0], row[1:]) for row in compare.table_rows())
    assert rows["CPU"] == (here.cpu_model, SERVER_CPU)
    assert rows["threads"] == (str(here.threads), "56")
    assert rows["file"] == ("laptop.json", "server.json")
    assert rows["plain median"][1] == "2.000 ms"
    assert (
        rows["native low precision"][1].startswith("yes (")
        and "amx_bf16" in rows["native low precision"][1]
    )
    assert compare.table.horizontalHeaderItem(1).text() == server_label


def test_the_windows_own_run_joins_the_comparison(window, qtbot, monkeypatch, tmp_path):
    result = run_to_end(qtbot, window)
    server = tmp_path / "server.json"
    server.write_text(as_other_machine(result.to_json()))
    compare = open_compare(window, qtbot, monkeypatch, [server])
    assert [run.source for run in compare.comparison().runs] == [
        "this window's run",
        "server.json",
    ]
    assert compare.latencyChart.drawn()["heights"][:2] == pytest.approx(
        [result.plain.median_ms, result.autocast.median_ms]
    )


CORRUPT = {
    "empty.json": b"",
    "truncated.json": None,  # the first half of a real result
    "foreign.json": json.dumps({"hello": "world"}).encode(),
    "preset.json": json.dumps(
        {"schema": "autocast-explorer/preset/1", "name": "x", "description": "y", "config": {}}
    ).encode(),
    "sweep.json": json.dumps({"schema": "autocast-explorer/sweep/1"}).encode(),
    "binary.json": bytes(range(256)),
    "list.json": b"[1, 2, 3]",
}


def test_corrupt_files_are_named_and_the_good_ones_still_shown(
    window, qtbot, monkeypatch, tmp_path, two_files
):
    result, laptop, _server = two_files
    bad = []
    for name, data in CORRUPT.items():
        path = tmp_path / name
        text = result.to_json().encode()
        path.write_bytes(text[: len(text) // 2] if data is None else data)
        bad.append(path)
    missing = tmp_path / "missing.json"
    huge = tmp_path / "huge.json"
    with huge.open("wb") as handle:
        handle.truncate(33 * 2**20)  # sparse: over the 32 MB limit without writing it
    compare = open_compare(window, qtbot, monkeypatch, [*bad, laptop, missing, huge])
    message = compare.findChild(QLabel, "compareMessage")
    assert message.isVisible()
    lines = message.text().splitlines()
    assert lines[0] == "Could not compare these 9 files:"
    named = {line.split(": ", 1)[0] for line in lines[1:]}
    assert named == {str(p) for p in [*bad, missing, huge]}
    text = message.text()
    assert f"{tmp_path / 'empty.json'}: " in text
    assert "is a sweep file" in text
    assert f"{missing}: no such file" in text
    assert f"{huge}: result: file is larger than 32 MB" in text
    assert f"{tmp_path / 'binary.json'}: result: not a text file (not UTF-8" in text
    # The one good file is still compared.
    assert compare.latencyChart.drawn()["heights"] == pytest.approx(
        [result.plain.median_ms, result.autocast.median_ms]
    )
    errors = compare.add_files([tmp_path / "empty.json"])
    assert isinstance(errors[0], ResultFileError)
    assert message.text().startswith("Could not compare this file:")


def test_open_result_refuses_corrupt_files_with_the_file_name(window, qtbot, monkeypatch, tmp_path):
    result = run_to_end(qtbot, window)
    for name in ("empty.json", "truncated.json", "foreign.json", "binary.json"):
        path = tmp_path / name
        data = CORRUPT[name]
        text = result.to_json().encode()
        path.write_bytes(text[: len(text) // 3] if data is None else data)
        monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, p=path, **k: (str(p), ""))
        window.openAction.trigger()
        assert window.messageBanner.isVisible()
        assert window.messageBanner.text().startswith(f"Could not open {path}: ")
        assert window.last_result is result  # what was shown stays shown


def test_a_config_difference_has_its_own_message(window, qtbot, monkeypatch, two_files):
    _result, laptop, server = two_files
    compare = open_compare(window, qtbot, monkeypatch, [laptop, server])
    difference = compare.findChild(QLabel, "compareConfigDifference")
    assert compare.config_differences() == []  # only the machine differs
    assert difference.isHidden()

    bigger = json.loads(server.read_text())
    bigger["config"]["batch"] *= 2
    bigger["config"]["seed"] = 7
    other = server.with_name("bigger.json")
    other.write_text(json.dumps(bigger))
    compare.add_files([str(other)])
    assert compare.config_differences() == ["batch", "seed"]
    assert difference.isVisible()
    assert difference.text() == (
        "The configs differ in batch, seed: these runs differ in more than the machine."
    )
    compare.clear()
    assert compare.config_differences() == [] and difference.isHidden()


def test_a_run_whose_autocast_forward_raised_is_shown_float32_only(
    window, qtbot, monkeypatch, two_files, tmp_path
):
    from tests.autocast_failure import MESSAGE, failing_result

    result, laptop, _server = two_files
    failed = failing_result(monkeypatch)
    path = tmp_path / "failed.json"
    path.write_text(failed.to_json())
    compare = open_compare(window, qtbot, monkeypatch, [laptop, path])
    assert not compare.findChild(QLabel, "compareMessage").isVisible()
    drawn = compare.latencyChart.drawn()
    assert drawn["heights"] == pytest.approx(
        [result.plain.median_ms, result.autocast.median_ms, failed.plain.median_ms]
    )
    assert drawn["colors"] == [style.dtype_color(d) for d in ("float32", "bfloat16", "float32")]
    assert drawn["legend"] == ["plain · float32", "autocast · bfloat16"]
    speed = compare.speedupChart.drawn()
    assert speed["value_labels"] == [speed_label(result), "raised"]
    rows = dict((row[0], row[1:]) for row in compare.table_rows())
    assert rows["autocast median"][1] == f"raised: RuntimeError: {MESSAGE}"[:43] + "…"
    assert rows["speedup"][0].startswith(
        f"{ratio_text(result.speedup)}×"
    )  # then its interval, if any
    assert rows["speedup"][1] == "—"
    assert rows["predictions agree"][1] == "—"
    assert rows["plain median"][1] == f"{failed.plain.median_ms:.3f} ms"


def test_other_model_families_show_their_parameters(window, qtbot, monkeypatch, tmp_path):
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.experiment.engine import run_experiment

    lstm = run_experiment(
        ExperimentConfig(
            model="rnn", cell="gru", features=8, hidden=16, seq=5, depth=1, batch=3, min_time=0.02
        )
    )
    path = tmp_path / "gru.json"
    path.write_text(lstm.to_json())
    compare = open_compare(window, qtbot, monkeypatch, [path])
    rows = dict((row[0], row[1:]) for row in compare.table_rows())
    assert rows["model"] == ("RNN · batch 3",)
    assert (rows["cell"], rows["features"], rows["hidden"], rows["seq"]) == (
        ("gru",),
        ("8",),
        ("16",),
        ("5",),
    )


def test_this_window_s_run_and_its_own_file_are_compared_once(window, qtbot, monkeypatch, tmp_path):
    """Compare opened with the window's run, then its saved file added: it was listed twice."""
    result = run_to_end(qtbot, window)
    saved = tmp_path / "mine.json"
    saved.write_text(result.to_json())
    compare = open_compare(window, qtbot, monkeypatch, [saved])
    assert len(compare.labels()) == 1
    message = compare.findChild(QLabel, "compareMessage")
    assert message.isVisible()
    assert message.text() == "Compared already (the same run): mine.json"
    compare.add_current()
    compare.add_files([str(saved)])
    assert len(compare.labels()) == 1
    assert len(compare.speedupChart.drawn()["speedups"]) == 1


def test_run_labels_never_run_into_each_other(window, qtbot, monkeypatch, two_files):
    """Two long CPU names under a narrow speedup chart were drawn over each other: each line
    of a run's label keeps to its run's slot, and is whole where there is room."""
    from PySide6.QtGui import QFontMetrics
    from PySide6.QtWidgets import QApplication

    from autocast_explorer.gui.charts.compare_charts import TICK_GAP_PX, run_tick

    _result, laptop, server = two_files
    compare = open_compare(window, qtbot, monkeypatch, [laptop, server])
    narrowed = []
    for width in (560, 1900):
        compare.resize(width, 800)
        for _ in range(5):
            QApplication.processEvents()
        for chart in (compare.latencyChart, compare.speedupChart):
            plot = chart.getPlotItem()
            metrics = QFontMetrics(plot.getAxis("bottom").style["tickFont"])
            room = plot.getViewBox().width() / 2 - TICK_GAP_PX
            labels = chart.drawn()["labels"]
            assert len(labels) == 2
            for line in (line for label in labels for line in label.split("\n")):
                assert metrics.horizontalAdvance(line) <= room + 1, line
            full = [run_tick(label) for label in compare.labels()]
            fits = all(
                metrics.horizontalAdvance(line) <= room for t in full for line in t.split("\n")
            )
            assert (labels == full) == fits, (width, labels)
            narrowed.append(not fits)
    assert narrowed[:2] == [True, True] and narrowed[2:] == [False, False]


def test_the_legend_sits_above_the_tallest_whisker(window, qtbot, monkeypatch, two_files):
    """The last run's long whisker ran through the legend's text in the top-right corner."""
    from PySide6.QtCore import QPointF
    from PySide6.QtWidgets import QApplication

    _result, laptop, server = two_files
    data = json.loads(server.read_text())
    data["latency"]["autocast"].update(median_ms=0.5, p25_ms=0.45, p75_ms=9.0)
    server.write_text(json.dumps(data))
    compare = open_compare(window, qtbot, monkeypatch, [laptop, server])
    chart = compare.latencyChart
    assert max(chart.drawn()["whisker_top"]) == pytest.approx(9.0)
    for height in (800, 420):
        compare.resize(900, height)
        for _ in range(5):
            QApplication.processEvents()
        view = chart.getPlotItem().getViewBox()
        whisker_top = view.mapViewToScene(QPointF(1.2, 9.0)).y()
        legend = chart._legend.sceneBoundingRect()
        assert legend.height() > 0
        assert legend.bottom() <= whisker_top, (height, legend, whisker_top)

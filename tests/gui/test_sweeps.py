"""The Sweeps, Placements and Hardware tabs: what they draw is what core measured and computed."""

from __future__ import annotations

import json
import math

import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QLabel

from autocast_explorer.core.experiment.timing import LatencyStats
from autocast_explorer.core.hardware.cpu import environment
from autocast_explorer.core.sweeps.crossover import crossovers, find_crossings, format_value
from autocast_explorer.core.sweeps.placements import casts_text, format_bytes
from autocast_explorer.core.sweeps.points import PointLatency
from autocast_explorer.core.sweeps.result import SCHEMA, SweepPoint, SweepResult
from autocast_explorer.core.sweeps.roofline import build_roofline
from autocast_explorer.core.sweeps.spec import SweepSpec
from autocast_explorer.core.sweeps.verdict import (
    flags_verdict,
    hardware_verdict,
    single_run_verdict,
    verdict_flags,
)
from autocast_explorer.gui.charts.speedup_heatmap import NEUTRAL, speedup_color
from tests.edits import edited, retimed
from tests.gui.helpers import RUN_TIMEOUT_MS, TINY, run_to_end
from tests.steady_clock import steady_timing
from tests.steady_rate import steady_rates

CTRL = Qt.KeyboardModifier.ControlModifier
ALT = Qt.KeyboardModifier.AltModifier


def stats(ms: float) -> LatencyStats:
    return LatencyStats.from_times([ms * 0.98, ms, ms * 1.03], cold_ms=ms * 3, block_size=2)


def synthetic(values, speedups, width_values=()) -> SweepResult:
    """A sweep whose speedups are chosen, so crossovers and colors are known exactly."""
    base = TINY.replace(widths=(32, 16, 16, 4))
    spec = SweepSpec("batch", values, width_values)
    env = environment(2)
    points = tuple(
        SweepPoint(
            index=plan.index,
            value=plan.value,
            value2=plan.value2,
            batch=plan.config.batch,
            widths=plan.config.widths,
            dtype="bfloat16",
            latency=PointLatency.of(stats(1.0), stats(1.0 / s), None),
        )
        for plan, s in zip(spec.plan(base), speedups, strict=True)
    )
    return SweepResult(
        schema_=SCHEMA,
        config=base,
        environment=env,
        param=spec.label,
        values=spec.values,
        width_values=spec.width_values or None,
        points=points,
        verdict=hardware_verdict(env, "bfloat16", "batch", spec.values, speedups[: len(values)]),
        roofline=build_roofline(
            "bfloat16",
            2,
            ((p.value, p.widths, p.batch, p.gflops_plain, p.gflops_autocast) for p in points),
        ),
        created="2025-01-01T00:00:00+00:00",
    )


def pixel(plot: pg.PlotWidget, x: float, y: float) -> str:
    """The color on screen at data coordinates (x, y) of `plot`."""
    view = plot.getPlotItem().getViewBox()
    point = plot.mapFromScene(view.mapViewToScene(QPointF(x, y)))
    image = plot.grab().toImage()
    ratio = image.devicePixelRatio()
    return image.pixelColor(round(point.x() * ratio), round(point.y() * ratio)).name()


def test_sweep_streams_point_by_point_and_draws_cores_numbers(
    window, qtbot, tmp_path, timing_noise
):
    timing_noise.clear(0.8)  # every point can tell (and is drawn), whatever the machine's load
    install, tab = window.sweeps, window.sweeps.sweeps
    assert window.resultTabs.tabText(window.resultTabs.indexOf(tab)) == "Sweeps"
    tab.set_sweep("batch", "1,4,16")
    assert tab.input_errors() == {}
    drawn_after_each: list[tuple[int, int]] = []
    tab.sweepPoint.connect(
        lambda _p: drawn_after_each.append(
            (len(tab.latencyPlot.drawn()["values"]), len(tab.speedupPlot.drawn()["values"]))
        )
    )
    messages: list[str] = []
    tab.client.progress.connect(lambda _f, m: messages.append(m))
    experiments: list[object] = []
    window.experimentFinished.connect(experiments.append)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    with qtbot.waitSignal(tab.sweepFinished, timeout=RUN_TIMEOUT_MS) as blocker:
        qtbot.keyClick(window, Qt.Key.Key_F6)  # Run › Run sweep
    result = blocker.args[0]
    assert window.resultTabs.currentWidget() is tab
    assert drawn_after_each == [(1, 1), (2, 2), (3, 3)]  # one more point drawn per partial
    # core's progress, throttled to 5 Hz: the first and the last always arrive; every point's
    # message carries core's estimate of the time left.
    assert messages[0] == "checking memory and time guards for 3 points"
    assert messages[-1] == "done"
    assert all("left" in m for m in messages if m.startswith("point "))
    assert experiments == []  # a sweep is not the window's own experiment
    assert result.spec.values == (1, 4, 16) and result.config == TINY

    latency = tab.latencyPlot.drawn()
    assert latency["values"] == [1.0, 4.0, 16.0]
    for mode in ("plain", "autocast"):
        got = [getattr(p, mode) for p in result.points]
        assert latency[mode]["median"] == [s.median_ms for s in got]
        assert latency[mode]["p25"] == [s.p25_ms for s in got]
        assert latency[mode]["p75"] == [s.p75_ms for s in got]
    assert latency["log"] == (True, True)
    assert latency["x_label"].startswith("batch")
    speedup = tab.speedupPlot.drawn()
    assert speedup["speedups"] == [p.speedup for p in result.points]
    assert speedup["crossovers"] == pytest.approx(list(result.crossover or []))
    assert tab.crossoverLabel.text() == result.crossover_sentence
    assert result.verdict.sentence in tab.verdictLabel.text()
    assert tab.warnings() == result.warnings

    # Ready for the next thing when the signal came.
    assert tab.runSweepButton.isEnabled() and window.runButton.isEnabled()
    assert not window.runner.is_running()

    hardware = install.hardware
    assert hardware.basis == "sweep"
    assert hardware.verdictHeadline.text() == result.verdict.sentence
    roof = hardware.rooflinePlot.drawn()
    assert roof["plain"] == [
        (p.intensity, p.gflops) for p in result.roofline.points if p.mode == "plain"
    ]
    assert [round(g, 6) for g, _label in roof["peaks"]] == [
        round(p.gflops, 6) for p in result.roofline.peaks.values()
    ]
    assert all("(estimate)" in label for _g, label in roof["peaks"])
    assert result.roofline.peak_formula in hardware.formulaLabel.text()

    json_path = tmp_path / "from-keys.json"
    install.ask_save_path = lambda *_args: (str(json_path), "")
    qtbot.keyClick(window, Qt.Key.Key_S, CTRL | ALT)  # File › Save sweep as JSON…
    assert SweepResult.from_json(json_path.read_text()).points == result.points
    assert install.save_sweep_json(tmp_path / "sweep.json")
    saved = SweepResult.from_json((tmp_path / "sweep.json").read_text())
    assert [p.plain.median_ms for p in saved.points] == latency["plain"]["median"]
    assert json.loads((tmp_path / "sweep.json").read_text())["schema"] == SCHEMA
    assert install.save_sweep_csv(tmp_path / "sweep.csv")
    assert (tmp_path / "sweep.csv").read_text() == result.to_csv()
    assert install.export_chart("speedup", tmp_path / "speedup.png")
    assert (tmp_path / "speedup.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cancel_stops_a_sweep_between_points(window, qtbot):
    tab = window.sweeps.sweeps
    window.set_config(TINY.replace(min_time=0.3))
    tab.set_sweep("batch", "1,2,4,8,16,32")
    while_running: list[tuple[bool, bool]] = []

    def cancel_after_first(_point: object) -> None:
        if not while_running:
            while_running.append((window.runButton.isEnabled(), window.start_experiment()))
            qtbot.mouseClick(tab.cancelSweepButton, Qt.MouseButton.LeftButton)

    tab.sweepPoint.connect(cancel_after_first)
    with (
        qtbot.assertNotEmitted(tab.sweepFinished, wait=200),
        qtbot.waitSignal(tab.sweepCancelled, timeout=RUN_TIMEOUT_MS),
    ):
        assert tab.start_sweep()
    assert while_running == [(False, False)]  # one task at a time on the shared runner
    drawn = tab.latencyPlot.drawn()["values"]
    assert 1 <= len(drawn) < 6
    assert drawn == [float(p.value) for p in tab.points()]
    assert tab.last_sweep is None
    assert tab.statusLabel.text().startswith(f"Cancelled after {len(drawn)} of 6 points")
    assert not window.runner.is_running()
    assert tab.runSweepButton.isEnabled() and window.runButton.isEnabled()
    assert not window.sweeps.saveSweepJsonAction.isEnabled()


@pytest.mark.parametrize(
    ("speedups", "count"),
    [((0.5, 0.8, 2.0, 0.7), 2), ((0.5, 0.6, 0.7, 0.8), 0), ((0.9, 1.1, 1.3, 1.5), 1)],
)
def test_crossover_markers_are_cores_crossovers(window, speedups, count):
    tab = window.sweeps.sweeps
    result = synthetic((16, 64, 256, 1024), speedups)
    tab.show_sweep(result)
    drawn = tab.speedupPlot.drawn()
    expected = list(result.crossover or [])
    assert len(expected) == count
    assert drawn["crossovers"] == pytest.approx(expected)
    assert drawn["marker_y"] == [1.0] * count
    assert drawn["guides"] == pytest.approx(expected)
    assert drawn["labels"] == [
        f"≈ {format_value(c.value)} {'↑' if c.rising else '↓'}"
        for c in find_crossings(result.values, result.speedups)
    ]
    assert drawn["break_even"] == 1.0
    assert drawn["point_colors"] == ["#2166ac" if s >= 1 else "#b2182b" for s in speedups]
    assert tab.crossoverLabel.text() == result.crossover_sentence


def test_heatmap_cells_say_each_points_interval_and_noise(window, qtbot):
    from autocast_explorer.core.experiment.certainty import TimingEvidence
    from autocast_explorer.core.experiment.interval import SpeedupInterval

    result = synthetic((1, 8), (0.5, 2.0, 0.25, 4.0), width_values=(128, 512))
    tight = TimingEvidence(
        interval=SpeedupInterval(low=1.94, high=2.06, level=0.95, pairs=30, estimate=2.0),
        stopped="precise",
    )
    wide = TimingEvidence(
        interval=SpeedupInterval(low=0.15, high=0.40, level=0.95, pairs=30, estimate=0.25),
        stopped="max_time",
    )
    noisy = TimingEvidence(
        interval=SpeedupInterval(low=0.8, high=1.6, level=0.95, pairs=30, estimate=1.2),
        stopped="max_time",
    )
    points = list(result.points)
    points[1] = retimed(points[1], evidence=tight)
    points[2] = retimed(points[2], evidence=wide)
    points[3] = retimed(points[3], evidence=noisy)
    tab = window.sweeps.sweeps
    tab.show_sweep(edited(result, points=tuple(points)))
    cells = {(c.width, c.batch): c for c in tab.speedupHeatmap.cells()}
    assert cells[(128, 8)].tooltip.startswith(
        "batch 8 × width 128: speedup 2.00× (95%: 1.94–2.06) (autocast 2.00× faster;"
    )
    # 0.15–0.40 is far wider than 1.25×, yet wholly slower: the direction, a rough factor.
    rough = cells[(512, 1)]
    assert (rough.text, rough.too_noisy) == ("≈0.25", False)
    assert rough.tooltip.startswith(
        "batch 1 × width 512: autocast about 4× slower (the paired timings varied widely"
    )
    # 0.8–1.6 beside medians 4.0 apart: too noisy, a hatched '?' with no figure at all.
    untold = cells[(512, 8)]
    assert (untold.text, untold.too_noisy, untold.untold) == ("?", True, "too noisy to tell")
    assert untold.tooltip.count("×") == 1  # "batch 8 × width 512" only: no speedup
    assert untold.tooltip.startswith("batch 8 × width 512: too noisy to tell (medians:")
    assert untold.color == "#9aa0a6"
    assert cells[(128, 1)].interval == "" and not cells[(128, 1)].too_noisy  # no evidence


def test_heatmap_colors_diverge_around_one(window, qtbot):
    tab = window.sweeps.sweeps
    speedups = (0.5, 1.0, 2.0, 0.25, 1.0, 4.0)
    result = synthetic((1, 8, 64), speedups, width_values=(128, 512))
    window.resultTabs.setCurrentWidget(tab)
    tab.show_sweep(result)
    heat = tab.speedupHeatmap  # the attribute is named as its objectName, as speedupPlot is
    assert heat is window.findChild(pg.PlotWidget, "speedupHeatmap")
    assert tab.speedupPlot is window.findChild(pg.PlotWidget, "speedupPlot")
    assert tab.latencyPlot is window.findChild(pg.PlotWidget, "sweepLatencyPlot")
    assert tab.rightStack.currentWidget() is heat
    cells = heat.cells()
    assert [(c.width, c.batch) for c in cells] == [(w, b) for w in (128, 512) for b in (1, 8, 64)]
    assert [c.speedup for c in cells] == pytest.approx(list(speedups))
    assert heat.drawn_colors() == [c.color for c in cells]
    by = {(c.width, c.batch): c.color for c in cells}
    assert by[(128, 8)] == by[(512, 8)] == NEUTRAL  # 1.0 is the neutral middle
    for width, batch in ((128, 64), (512, 64)):  # faster: blue side
        color = pg.mkColor(by[(width, batch)])
        assert color.blue() > color.red()
    for width, batch in ((128, 1), (512, 1)):  # slower: red side
        color = pg.mkColor(by[(width, batch)])
        assert color.red() > color.blue()
    # Equal ratios, equally strong: 2× faster mirrors 2× slower around the middle.
    fast, slow = pg.mkColor(by[(128, 64)]), pg.mkColor(by[(128, 1)])
    assert (fast.red(), fast.blue()) != (slow.red(), slow.blue())
    assert by[(512, 64)] == speedup_color(4.0, 2.0) and by[(512, 1)] == speedup_color(0.25, 2.0)
    assert heat.color_bar()["levels"] == (-2.0, 2.0)
    assert heat.color_bar()["ticks"] == ["1/4×", "1/2×", "1×", "2×", "4×"]
    assert heat.cell_texts() == ["0.50", "1.00", "2.00", "0.25", "1.00", "4.00"]
    marks = heat.crossover_marks()
    rows = {w: [p.speedup for p in result.points if p.value2 == w] for w in (128, 512)}
    expected = [(w, c) for w in (128, 512) for c in crossovers([1, 8, 64], rows[w])]
    assert [(w, v) for w, v, _x in marks] == expected
    assert [x for _w, _v, x in marks] == pytest.approx([1.0, 1.0])  # exactly at batch 8
    qtbot.waitExposed(heat)
    assert pixel(heat, 2.3, 0.3) == by[(128, 64)]  # on screen, away from the cell's text
    assert pixel(heat, -0.3, 1.3) == by[(512, 1)]
    assert "width 512: 8" in tab.crossoverLabel.text()


def test_invalid_values_are_explained_inline_and_block_run_sweep(window, qtbot):
    tab = window.sweeps.sweeps
    window.resultTabs.setCurrentWidget(tab)
    with qtbot.assertNotEmitted(tab.sweepStarted, wait=100):
        tab.set_sweep("batch", "1,x,8")
        assert tab.input_errors() == {"values": "'x' is not a whole number"}
        assert window.findChild(QLabel, "sweepValuesError").isVisible()
        assert not tab.runSweepButton.isEnabled()
        assert tab.start_sweep() is False
        tab.set_sweep("batch", "1:8")
        assert "LOW:HIGH:COUNT" in tab.input_errors()["values"]
        tab.set_sweep("grid", "1,8", "64,0")
        assert tab.input_errors() == {"width_values": "0 must be a whole number ≥ 1"}
        assert window.findChild(QLabel, "sweepWidthValuesError").isVisible()
        tab.set_sweep("width", "64,128")
        window.set_config(TINY)  # widths 32,16,4: one hidden layer, fine
        assert tab.input_errors() == {}
        window.set_config(TINY.replace(widths=(32, 4)))
        assert "hidden layer" in tab.input_errors()["values"]
        window.set_config(TINY.replace(memory_budget_mb=64))
        tab.set_sweep("batch", "1,8,500000")
        message = tab.input_errors()["sweep"]
        assert message.startswith("Too much memory at batch 500000:")
        assert window.findChild(QLabel, "sweepError").text() == message
        assert not tab.runSweepButton.isEnabled()
        assert window.runButton.isEnabled()  # the window's own config (batch 8) is fine
    tab.reset_values()
    assert tab.valuesEdit.text() == "1:2048:12"
    assert tab.input_errors() == {}
    assert tab.runSweepButton.isEnabled()
    assert not window.findChild(QLabel, "sweepError").isVisible()


def test_placements_table_shows_cores_report(window, qtbot):
    install = window.sweeps
    tab = install.placements
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=5000)
    # On a steady clock: each placement's interval cannot lose its pairs to a busy machine.
    finished = qtbot.waitSignal(tab.placementsFinished, timeout=RUN_TIMEOUT_MS)
    with steady_timing(), finished as blocker:
        qtbot.keyClick(window, Qt.Key.Key_F7)
    report = blocker.args[0]
    assert window.resultTabs.currentWidget() is tab
    values = tab.values()
    assert [v["name"] for v in values] == ["float32", "per_call", "hoisted", "pre_cast"]
    assert values[0]["median_ms"] == report.float32.median_ms
    for row, mode in zip(values[1:], report.modes, strict=True):
        assert row["median_ms"] == mode.median_ms
        assert row["casts_per_forward"] == mode.casts_per_forward
        assert row["cast_bytes"] == mode.cast_bytes
        assert row["one_time_casts"] == mode.one_time_casts
    rows = tab.rows()
    for text, mode in zip(rows[1:], report.modes, strict=True):
        assert text[0] == mode.label
        assert text[3] == casts_text(mode.casts_per_forward)
        assert text[4] == format_bytes(mode.cast_bytes)
        # The call its paired interval supports (never "0.40× slower": times longer), with
        # the interval where it states a figure (this machine's load decides which).
        assert text[6] == report.vs_float32(mode) and mode.interval is not None
        if text[6] not in ("can't tell", "too noisy to tell"):
            assert f"{mode.interval.level:.0%}: " in text[6]
    assert report.per_call.casts_per_forward > report.hoisted.casts_per_forward
    assert report.pre_cast.casts_per_forward == 0
    assert report.explanation in tab.explanationLabel.text()
    chart = tab.chart.drawn()
    assert chart["heights"] == [report.float32.median_ms, *(m.median_ms for m in report.modes)]
    assert chart["ticks"][1] == f"per-call\n{casts_text(report.per_call.casts_per_forward)}/forward"
    assert install.exportActions["placements"].isEnabled()


def test_hardware_panel_shows_this_machines_flags_and_verdicts(window, qtbot, timing_noise):
    hardware = window.sweeps.hardware
    env = window.environment
    assert hardware.basis == "flags"
    assert hardware.flags_shown() == {
        flag: flag in env.cpu_flags for flag in verdict_flags(env.cpu_flags)
    }
    rows = dict(hardware.rows())
    assert rows["CPU"] == env.cpu_model
    assert rows["Cores / threads"] == f"{env.cores} / {env.threads}"
    assert rows["torch capability"] == env.cpu_capability
    yes_no = {True: "yes", False: "no", None: "unknown"}
    assert rows["torch: bf16 ok?"] == yes_no[env.torch_bf16_supported]
    assert rows["torch: fp16 ok?"] == yes_no[env.torch_fp16_supported]
    assert rows["oneDNN"].startswith("available" if env.mkldnn else "not in")
    assert hardware.verdictHeadline.text() == flags_verdict(env, "bfloat16").sentence
    window.controls.dtypeCombo.setCurrentText("float16")  # the flags verdict follows the dtype
    assert hardware.verdictHeadline.text() == flags_verdict(env, "float16").sentence
    window.set_config(TINY)

    timing_noise.clear(0.6)  # a clear run, whatever the machine's load: its rates count
    result = run_to_end(qtbot, window)
    assert hardware.basis == "run"
    rates = (result.gflops("plain"), result.gflops("autocast"))
    expected = single_run_verdict(
        result.environment, "bfloat16", TINY.batch, result.speedup, rates=rates,
        call=result.speed_call,
    )  # fmt: skip
    assert f"autocast ran {1 / result.speedup:.2g}× slower at batch {TINY.batch}" in (
        expected.sentence
    )
    assert hardware.verdictHeadline.text() == expected.sentence
    roof = hardware.rooflinePlot.drawn()
    assert [g for _i, g in roof["plain"]] == [result.plain.gflops(result.flops)]
    assert [g for _i, g in roof["autocast"]] == [result.autocast.gflops(result.flops)]

    with qtbot.waitSignal(hardware.probeFinished, timeout=RUN_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(hardware.probeButton, Qt.MouseButton.LeftButton)
    probe = blocker.args[0]
    assert probe.summary in hardware.onednnLabel.text()
    rows = dict(hardware.rows())
    if probe.determined:
        assert rows["bf16 GEMM kernel"] == probe.autocast_kernels[0].implementation
    else:
        assert rows["Kernel that ran"] == "could not be determined"
    # Where bf16 is not native, the tab says what ran instead, from the probe and both rates.
    probed = single_run_verdict(
        result.environment,
        "bfloat16",
        TINY.batch,
        result.speedup,
        rates=rates,
        onednn=probe,
        call=result.speed_call,
    )
    assert hardware.verdictHeadline.text() == probed.sentence
    assert rows.get("What ran instead") == (probed.instead or None)
    assert bool(probed.instead) is not result.environment.native_bf16
    assert not math.isnan(result.speedup)


def test_grid_streams_into_the_heatmap(window, qtbot):
    tab = window.sweeps.sweeps
    window.resultTabs.setCurrentWidget(tab)
    tab.set_sweep("grid", "1,8", "16,32")
    measured_after_each: list[int] = []
    tab.sweepPoint.connect(
        lambda _p: measured_after_each.append(
            sum(math.isfinite(c.speedup) for c in tab.speedupHeatmap.cells())
        )
    )
    with qtbot.waitSignal(tab.sweepFinished, timeout=RUN_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(tab.runSweepButton, Qt.MouseButton.LeftButton)
    result = blocker.args[0]
    assert measured_after_each == [1, 2, 3, 4]
    matrix = result.speedup_matrix()
    assert [c.speedup for c in tab.speedupHeatmap.cells()] == [s for row in matrix for s in row]
    assert tab.rowCombo.currentData() == 32  # the latency chart shows the widest row
    widest = [p for p in result.points if p.value2 == 32]
    assert tab.latencyPlot.drawn()["plain"]["median"] == [p.plain.median_ms for p in widest]
    assert tab.crossoverLabel.text() == result.crossover_sentence
    assert window.sweeps.exportActions["heatmap"].isEnabled()
    assert not window.sweeps.exportActions["speedup"].isEnabled()


def test_time_guard_refuses_a_sweep_before_measuring(window, qtbot):
    tab = window.sweeps.sweeps
    window.resultTabs.setCurrentWidget(tab)
    # A budget big enough for the memory guard; at 1 GFLOP/s a forward of width 16 at batch
    # 10⁵ takes a few ms, one of width 10⁶ hours.
    window.set_config(TINY.replace(batch=100_000, memory_budget_mb=5_000_000))
    tab.set_sweep("width", "16,1000000")
    assert tab.input_errors() == {}
    with (
        steady_rates(1e9),
        qtbot.waitSignal(tab.sweepFailed, timeout=RUN_TIMEOUT_MS) as blocker,
    ):
        assert tab.start_sweep()
    assert blocker.args[0].startswith("time: width 1000000: one forward pass is estimated")
    assert tab.points() == []
    message = tab.input_errors()["sweep"]
    assert message.startswith("Too slow: width 1000000: one forward pass is estimated")
    assert window.findChild(QLabel, "sweepError").text() == message
    assert not tab.runSweepButton.isEnabled()
    tab.set_sweep("width", "16,64")  # another sweep: allowed again
    assert tab.input_errors() == {}
    assert tab.runSweepButton.isEnabled()


def test_progress_is_throttled_but_keeps_the_first_and_the_last():
    from autocast_explorer.gui.features.sweeps.tab import ThrottledProgress

    class State:
        def __init__(self) -> None:
            self.seen: list[tuple[float, str]] = []

        def set_progress(self, fraction: float, message: str) -> None:
            self.seen.append((fraction, message))

    state = State()
    progress = ThrottledProgress(state, interval=3600)
    for i in range(100):
        progress(i / 100, f"block {i}")
    progress(1.0, "done")
    assert state.seen == [(0.0, "block 0"), (1.0, "done")]


def test_menu_entries_have_keys_and_chart_exports_sit_in_the_export_menu(window):
    from PySide6.QtWidgets import QMenu

    install = window.sweeps
    export_menu = window.findChild(QMenu, "exportMenu")
    assert set(install.exportActions.values()) <= set(export_menu.actions())
    keyed = {
        install.runSweepAction: "F6",
        window.placementsAction: "F7",
        window.onednnAction: "F8",
        install.saveSweepJsonAction: "Ctrl+Alt+S",
        install.saveSweepCsvAction: "Ctrl+Alt+Shift+S",
    }
    for action, keys in keyed.items():
        assert action.shortcut().toString() == keys
        assert f"({keys})" in action.toolTip()
    assert keyed.keys() <= set(window.menu("Run").actions()) | set(window.menu("File").actions())
    assert window.sweeps.sweeps.runSweepButton.text() == "Run sweep  (F6)"

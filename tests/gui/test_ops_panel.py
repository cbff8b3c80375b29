"""The Ops tab: the op-policy probe runs on the window's runner, classifies, saves, cancels."""

from __future__ import annotations

import threading

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from autocast_explorer.core.numerics.oppolicy import CATEGORIES, PROBED_OPS, ProbeResult
from autocast_explorer.gui.features.ops import panel as ops_panel
from autocast_explorer.gui.features.ops.panel import POLICY_MEANINGS
from autocast_explorer.gui.shell import style
from tests.gui.helpers import RUN_TIMEOUT_MS

PROBE_TIMEOUT_MS = 120_000


def test_probe_through_the_worker_shows_the_measured_policies(window, qtbot, tmp_path, monkeypatch):
    panel = window.opsPanel
    window.resultTabs.setCurrentWidget(panel)
    assert panel.probeDtypeCombo.currentText() == "bfloat16"  # follows the config
    assert panel.policies() == {}
    assert not panel.saveProbeButton.isEnabled()

    with qtbot.waitSignal(panel.probeFinished, timeout=PROBE_TIMEOUT_MS) as blocker:
        qtbot.mouseClick(panel.probeButton, Qt.MouseButton.LeftButton)
        assert window.runner.is_running()  # the shared runner, so Run waits for it
        assert not window.runButton.isEnabled()
        assert not panel.probeButton.isEnabled()
    probe = blocker.args[0]
    assert isinstance(probe, ProbeResult)
    assert window.runButton.isEnabled() and panel.probeButton.isEnabled()

    policies = panel.policies()
    assert policies == {op.name: op.policy for op in probe.ops}
    assert len(policies) == len(PROBED_OPS)
    expected = {"linear": "lower", "mse_loss": "fp32", "relu": "follows", "cat": "promote"}
    assert {name: policies[name] for name in expected} == expected
    colors = panel.policy_colors()
    assert colors["linear"] == style.dtype_color("bfloat16")
    assert colors["mse_loss"] == style.dtype_color("float32")
    assert len({colors[name] for name in expected}) == 4  # one color per policy
    assert panel.case_outputs("linear")["float32"] == "bfloat16"
    assert panel.case_outputs("relu") == {
        "float32": "float32",
        "low": "bfloat16",
        "low_first": "—",
        "float32_first": "—",
    }
    assert panel.case_outputs("cat")["low_first"] == "float32"
    assert panel.case_outputs("eq")["low"] == "bool[bfloat16]"  # the dtype it computed in
    assert panel.case_outputs("fft_fft")["low"] == "c64[float32]"

    # The documented column, straight from the probe's documented policies.
    documented = panel.documented_policies()
    assert documented == {op.name: op.documented.policy for op in probe.ops}
    assert (documented["linear"], documented["relu"], documented["eq"]) == (
        "lower",
        "unlisted",
        "promote",
    )
    disagreeing = [op.name for op in probe.disagreements()]
    assert panel.flagged_ops() == [n for n in panel.policies() if n in disagreeing]
    assert set(panel.flagged_ops()) == set(disagreeing)

    # Grouped by category: a header row per category, in order, each before its ops.
    layout = panel.row_layout()
    headers = [text for kind, text in layout if kind == "group"]
    assert [h.split(" (")[0] for h in headers] == list(CATEGORIES.values())
    losses = sum(op.category == "losses" for op in probe.ops)
    assert f"losses ({losses}" in headers[list(CATEGORIES).index("losses")]
    assert layout[0] == ("group", headers[0]) and layout[1] == ("op", "linear")
    table = panel.policyTable
    assert table.columnSpan(0, 0) == table.columnCount()  # a header row spans the table

    # Counts per policy.
    counts = probe.policy_counts()
    text = panel.countsLabel.text()
    assert f"<b>{len(probe.ops)}</b> ops" in text
    for policy, n in counts.items():
        assert f"<b>{n}</b> {policy}" in text
    assert f"<b>{len(disagreeing)}</b> ⚠ disagree" in text

    # The filter box: "loss" keeps the losses (and any op named *loss*), with counts n/total.
    panel.filterEdit.setText("loss")
    shown = list(panel.policies())
    assert shown == [op.name for op in probe.ops if "loss" in op.name or op.category == "losses"]
    assert [t for k, t in panel.row_layout() if k == "group"] == [f"losses ({len(shown)})"]
    assert f"<b>{len(shown)} of {len(probe.ops)}</b> shown" in panel.countsLabel.text()
    assert f"<b>{len(shown)}/{counts['fp32']}</b> fp32" in panel.countsLabel.text()
    qtbot.keyClicks(panel.filterEdit, " nothing-matches")
    assert panel.policies() == {} and panel.policyTable.rowCount() == 0
    panel.filterEdit.clear()
    assert len(panel.policies()) == len(probe.ops)

    # Disagreements first: their own group on top, the rest below, nothing lost.
    qtbot.mouseClick(panel.disagreementsFirstCheck, Qt.MouseButton.LeftButton)
    assert panel.disagreementsFirstCheck.isChecked()
    layout = panel.row_layout()
    if disagreeing:
        assert layout[0][0] == "group" and layout[0][1].startswith("⚠ disagree")
        assert [t for _k, t in layout[1 : 1 + len(disagreeing)]] == disagreeing
    assert sorted(panel.policies()) == sorted(op.name for op in probe.ops)
    panel.disagreementsFirstCheck.setChecked(False)

    notes = panel.notesView.toPlainText()
    assert f"Disagreements with PyTorch's documentation ({len(disagreeing)})" in notes
    for name in disagreeing:
        assert f"{name} — documented:" in notes
    assert "tutorial" in notes and "CUDA" in notes
    beliefs = [n for n in probe.notes if not n.source.startswith("documented")]
    assert f"({sum(n.contradicts for n in beliefs)} notes)" in notes
    assert "docs/source/amp.md" in notes and "AutocastCPUTestLists" in notes
    legend = panel.legend.text()
    assert all(policy in legend for policy in ("lower", "fp32", "follows", "promote"))
    assert all(meaning in panel.legend.toolTip() for meaning in POLICY_MEANINGS.values())

    path = tmp_path / "ops.json"
    assert panel.saveProbeButton.isEnabled()
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(path), ""))
    )
    qtbot.mouseClick(panel.saveProbeButton, Qt.MouseButton.LeftButton)
    saved = ProbeResult.from_json(path.read_text(encoding="utf-8"))
    assert {op.name: op.policy for op in saved.ops} == policies
    assert [op.name for op in saved.disagreements()] == disagreeing
    assert not panel.save_probe(tmp_path)  # a directory: the error is shown, not raised
    assert "Could not save" in panel.statusLabel.text()


def test_cancel_stops_a_probe(window, qtbot, monkeypatch):
    panel = window.opsPanel
    # The real probe, held at its start until Cancel has been clicked (it takes ~0.1 s warm,
    # so an unheld probe could finish before the click arrives).
    gate = threading.Event()
    real_task = ops_panel.probe_task

    def held_task(dtype: str, state: object) -> object:
        gate.wait(10)
        return real_task(dtype, state)

    monkeypatch.setattr(ops_panel, "probe_task", held_task)
    finished: list[object] = []
    panel.probeFinished.connect(finished.append)
    with qtbot.waitSignal(panel.probeCancelled, timeout=RUN_TIMEOUT_MS):
        window.probeAction.trigger()  # F9: shows the Ops tab, starts
        assert window.resultTabs.currentWidget() is panel
        assert window.cancelButton.isEnabled()
        qtbot.mouseClick(window.cancelButton, Qt.MouseButton.LeftButton)
        gate.set()
    assert finished == []
    assert panel.policies() == {}
    assert panel.statusLabel.text() == "Probe cancelled."
    assert not window.runner.is_running()
    assert panel.probeButton.isEnabled() and window.runButton.isEnabled()


def test_probe_dtype_follows_the_config_and_can_differ(window):
    panel = window.opsPanel
    window.controls.dtypeCombo.setCurrentText("float16")
    assert panel.probeDtypeCombo.currentText() == "float16"
    panel.probeDtypeCombo.setCurrentText("bfloat16")
    assert window.current_config().dtype == "float16"  # the experiment is left alone


def test_columns_read_whole_at_1024x640_with_lessons(window, qtbot):
    """The case columns took what the stretched layout left them and read '…'; now each is as
    wide as its header and cells (the table scrolls sideways), and the notes go under it."""
    from PySide6.QtWidgets import QApplication

    from autocast_explorer.core.numerics.oppolicy import probe_ops

    specs = [s for s in PROBED_OPS if s.name in ("linear", "relu", "cat", "eq", "mse_loss")]
    panel = window.opsPanel
    panel.show_probe(probe_ops("bfloat16", specs=specs))
    window.lessonsAction.trigger()
    window.resize(1024, 640)
    window.resultTabs.setCurrentWidget(panel)
    for _ in range(3):
        QApplication.processEvents()
    table = panel.policyTable
    assert table.rowCount() >= len(specs)
    assert panel.width() < panel.SIDE_BY_SIDE_WIDTH
    assert panel.splitter.orientation() == Qt.Orientation.Vertical
    header = table.horizontalHeader()
    metrics = table.fontMetrics()

    def widest(fm, text: str) -> int:
        return max(fm.horizontalAdvance(line) for line in text.split("\n"))

    for column in range(1, table.columnCount()):
        title = table.horizontalHeaderItem(column).text()
        width = header.sectionSize(column)
        assert widest(header.fontMetrics(), title) < width, title
        for row in range(table.rowCount()):
            item = table.item(row, column)
            if item is not None and item.text() and table.columnSpan(row, 0) == 1:
                assert widest(metrics, item.text()) < width, (title, item.text())


def test_the_op_column_takes_the_spare_width_of_a_wide_window(window, qtbot):
    """At 1920×1080 the columns used about 420 px of an 890 px table and left an empty band:
    the op column now takes what the others leave, never less than its own width."""
    from PySide6.QtWidgets import QApplication

    from autocast_explorer.core.numerics.oppolicy import probe_ops
    from autocast_explorer.gui.features.ops.panel import OP_COL, OP_COLUMN_WIDTH

    specs = [s for s in PROBED_OPS if s.name in ("linear", "relu", "cat")]
    panel = window.opsPanel
    panel.show_probe(probe_ops("bfloat16", specs=specs))
    window.resize(1920, 1080)
    window.resultTabs.setCurrentWidget(panel)
    for _ in range(3):
        QApplication.processEvents()
    table = panel.policyTable
    header = table.horizontalHeader()
    total = sum(header.sectionSize(c) for c in range(table.columnCount()))
    assert header.sectionSize(OP_COL) > OP_COLUMN_WIDTH
    assert total == table.viewport().width()
    window.lessonsAction.trigger()
    window.resize(1024, 640)  # narrower than the columns: the op column keeps its own width
    for _ in range(3):
        QApplication.processEvents()
    assert header.sectionSize(OP_COL) == OP_COLUMN_WIDTH

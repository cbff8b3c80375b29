"""The Ops tab: the op-policy probe runs on the window's runner, classifies, saves, cancels."""

from __future__ import annotations

import threading

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from autocast_explorer.core.numerics.oppolicy import ProbeResult
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

    contradicted = {n.op for n in probe.notes if n.contradicts}
    assert {"softmax", "mean"} <= contradicted  # the tutorial's claim, measured
    assert set(panel.flagged_ops()) == contradicted
    notes = panel.notesView.toPlainText()
    assert "tutorial" in notes and "CUDA" in notes
    assert f"({sum(n.contradicts for n in probe.notes)} notes)" in notes
    legend = panel.legend.text()
    assert all(policy in legend for policy in ("lower", "fp32", "follows", "promote"))
    assert all(meaning in legend for meaning in POLICY_MEANINGS.values())

    path = tmp_path / "ops.json"
    assert panel.saveProbeButton.isEnabled()
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(path), ""))
    )
    qtbot.mouseClick(panel.saveProbeButton, Qt.MouseButton.LeftButton)
    saved = ProbeResult.from_json(path.read_text(encoding="utf-8"))
    assert {op.name: op.policy for op in saved.ops} == policies
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

"""Your own model in the window: "Your model…" in modelCombo, the spec field, the trust question
asked once per file, a failing factory shown under the model field with the result kept, and
the remembered specs."""

from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QWidget

from autocast_explorer.gui.window.settings import recent_specs
from tests.gui.helpers import run_to_end

MODEL = """\
import torch


def build():
    net = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.ReLU(), torch.nn.Linear(12, 3))
    return net, torch.randn(1, 6)


def broken():
    raise RuntimeError("the factory broke")


def regress():
    # no logits: batch × 3 × 5 from a Linear layer
    net = torch.nn.Sequential(torch.nn.Linear(6, 15), torch.nn.Unflatten(1, (3, 5)))
    return net, torch.randn(1, 6)
"""


def _choose_user(window, qtbot) -> QLineEdit:
    combo = window.findChild(QComboBox, "modelCombo")
    combo.setCurrentIndex(combo.findData("user"))
    edit = window.findChild(QLineEdit, "modelSpecEdit")
    qtbot.waitUntil(edit.isVisible, timeout=2000)
    return edit


def test_a_file_model_runs_after_one_trust_question(window, qtbot, tmp_path: Path):
    path = tmp_path / "my_model.py"
    path.write_text(MODEL)
    asked: list[str] = []
    window.confirm_model_file = lambda p: asked.append(p) or True
    edit = _choose_user(window, qtbot)
    assert not window.controls.widthsEdit.isVisible()
    edit.setText(f"{path}:build")
    config = window.current_config()
    assert config.model == f"{path}:build" and config.is_user_model
    result = run_to_end(qtbot, window)
    assert [layer.autocast.out_dtype for layer in result.layers] == ["bfloat16"] * 3
    assert result.model_info.class_name == "Sequential"
    assert asked == [str(path.resolve())]
    run_to_end(qtbot, window)
    assert len(asked) == 1  # asked once per file
    assert recent_specs()[0] == f"{path}:build"


def test_declining_the_trust_question_runs_nothing(window, qtbot, tmp_path: Path):
    path = tmp_path / "other.py"
    path.write_text(MODEL)
    window.confirm_model_file = lambda _p: False
    _choose_user(window, qtbot).setText(f"{path}:build")
    assert window.start_experiment() is False
    assert window.last_result is None


def test_a_failing_factory_is_shown_under_the_model_field(window, qtbot, tmp_path: Path):
    path = tmp_path / "my_model.py"
    path.write_text(MODEL)
    window.confirm_model_file = lambda _p: True
    edit = _choose_user(window, qtbot)
    edit.setText(f"{path}:build")
    kept = run_to_end(qtbot, window)
    edit.setText(f"{path}:broken")
    with qtbot.waitSignal(window.experimentFailed, timeout=60_000):
        assert window.start_experiment()
    error = window.findChild(QLabel, "modelError")
    qtbot.waitUntil(error.isVisible, timeout=2000)
    line = MODEL.splitlines().index('    raise RuntimeError("the factory broke")') + 1
    assert f"calling broken: my_model.py:{line}: RuntimeError: the factory broke" in error.text()
    assert window.last_result is kept
    assert window.runButton.isEnabled()  # the file may be fixed: Run stays available


def test_a_bad_spec_is_refused_inline(window, qtbot):
    _choose_user(window, qtbot).setText("model.pt2:load")
    error = window.findChild(QLabel, "modelError")
    qtbot.waitUntil(error.isVisible, timeout=2000)
    assert "pickled code" in error.text()
    assert not window.runButton.isEnabled()


def test_an_mse_training_run_shows_its_loss_and_says_why_there_is_no_accuracy(
    window, qtbot, tmp_path: Path
):
    path = tmp_path / "my_model.py"
    path.write_text(MODEL)
    window.confirm_model_file = lambda _p: True
    _choose_user(window, qtbot).setText(f"{path}:regress")
    window.set_config(window.current_config().replace(mode="train", steps=6, batch=4, threads=1))
    steps = []
    window.experimentStep.connect(steps.append)
    result = run_to_end(qtbot, window)
    train = result.train
    assert train.loss_kind == "mse" and {s.loss_kind for s in steps} == {"mse"}
    drawn = window.findChild(pg.PlotWidget, "lossPlot").drawn()
    assert drawn["left"] == "loss (MSE to the target)"
    assert drawn["plain"][1] == list(train.loss["plain"])
    held = train.held_out_loss
    assert drawn["accuracy_text"] == (
        f"no accuracy (not logits) · held-out MSE: float32 {held['plain']:.4g} · "
        f"bfloat16 {held['autocast']:.4g}"
    )
    summary = window.findChild(QWidget, "trainingSummary").text()
    assert "held-out MSE (16 rows)" in summary and "no accuracy: the output is batch×3×5" in summary
    # The Accuracy tab: no accuracy, and why; its chart draws the training MSE, never blank.
    assert window.findChild(QLabel, "accuracyHeadline").text() == (
        "No accuracy: this model trained with MSE"
    )
    text = window.findChild(QLabel, "accuracySummary").text()
    assert "not batch × classes logits" in text and f"{held['autocast']:.4g}" in text
    chart = window.findChild(pg.PlotWidget, "epochAccuracyPlot")
    assert chart.shows_mse()
    assert chart.drawn()["plain"] == [(float(i), v) for i, v in enumerate(train.loss["plain"], 1)]
    assert chart.getPlotItem().getAxis("left").labelText == "training MSE"

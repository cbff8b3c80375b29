"""Your own model in the window: "Your model…" in modelCombo, the spec field, the trust question
asked once per file, a failing factory shown under the model field with the result kept, and
the remembered specs."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit

from autocast_explorer.gui.window.settings import recent_specs
from tests.gui.helpers import run_to_end

MODEL = """\
import torch


def build():
    net = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.ReLU(), torch.nn.Linear(12, 3))
    return net, torch.randn(1, 6)


def broken():
    raise RuntimeError("the factory broke")
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

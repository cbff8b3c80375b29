"""Your own model in the window: "Your model…" in modelCombo, the spec field, the trust question
asked once per file, a failing factory shown under the model field with the result kept, and
the remembered specs."""

from __future__ import annotations

import sys
from pathlib import Path

import pyqtgraph as pg
import pytest
import torch
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QToolButton, QWidget

from autocast_explorer.gui.window.settings import recent_specs
from autocast_explorer.testing import RunNotStarted, run_and_wait
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


class Thirteenth(torch.nn.Linear):
    calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls == 13:
            raise RuntimeError("the thirteenth call broke")
        return super().forward(x)


def thirteenth():
    return Thirteenth(6, 3), torch.randn(1, 6)
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


def test_declining_the_trust_question_runs_nothing_and_says_why(window, qtbot, tmp_path: Path):
    path = tmp_path / "other.py"
    path.write_text(MODEL)
    window.confirm_model_file = lambda _p: False
    _choose_user(window, qtbot).setText(f"{path}:build")
    with pytest.raises(RunNotStarted) as refused:
        run_and_wait(window)
    why = (
        f'{path}:build: not run: the answer to "Run code from this file?" was No ({path.resolve()})'
    )
    assert refused.value.errors == {"model": why} == window.input_errors()
    assert window.findChild(QLabel, "modelError").text() == why
    assert window.last_result is None
    assert window.runButton.isEnabled()  # Run asks again
    window.confirm_model_file = lambda _p: True
    result = run_and_wait(window)
    assert result.model_info.class_name == "Sequential" and window.input_errors() == {}


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


def test_code_failing_after_the_probe_is_shown_as_the_probe_failing_is(
    window, qtbot, tmp_path: Path
):
    """A forward that fails on its 13th call (in the timing, long after the probe): the same
    one line under the model field and in the banner, the shown result kept, Run available."""
    path = tmp_path / "my_model.py"
    path.write_text(MODEL)
    window.confirm_model_file = lambda _p: True
    edit = _choose_user(window, qtbot)
    edit.setText(f"{path}:build")
    window.set_config(window.current_config().replace(batch=2, min_time=0.01, threads=1))
    kept = run_to_end(qtbot, window)
    edit.setText(f"{path}:thirteenth")
    with qtbot.waitSignal(window.experimentFailed, timeout=60_000) as failed:
        assert window.start_experiment()
    line = (
        MODEL.splitlines().index('            raise RuntimeError("the thirteenth call broke")') + 1
    )
    expected = (
        f"model: {path}:thirteenth: timing the forwards: my_model.py:{line}: "
        "RuntimeError: the thirteenth call broke"
    )
    assert failed.args[0] == expected
    error = window.findChild(QLabel, "modelError")
    qtbot.waitUntil(error.isVisible, timeout=2000)
    assert error.text() == expected.removeprefix("model: ")
    assert window.messageBanner.text() == f"Run failed: {expected}"
    assert window.last_result is kept
    assert window.runButton.isEnabled()


def test_a_fixed_file_clears_its_old_error_when_run_again(window, qtbot, tmp_path: Path):
    # The same spec fails, the file is fixed, Run: the old line goes at once, as dataError's does.
    path = tmp_path / "my_model.py"
    path.write_text(MODEL.replace("def build():", "def build():\n    raise ValueError('not yet')"))
    window.confirm_model_file = lambda _p: True
    _choose_user(window, qtbot).setText(f"{path}:build")
    with qtbot.waitSignal(window.experimentFailed, timeout=60_000):
        assert window.start_experiment()
    assert window.input_errors()["model"].endswith("ValueError: not yet")
    error = window.findChild(QLabel, "modelError")
    assert error.isVisibleTo(window)
    path.write_text(MODEL)
    with qtbot.waitSignal(window.experimentFinished, timeout=60_000) as finished:
        qtbot.mouseClick(window.runButton, Qt.MouseButton.LeftButton)
        assert "model" not in window.input_errors()  # gone as the run starts, not a run later
        assert not error.isVisibleTo(window) and error.text() == ""
    assert finished.args[0].model_info.class_name == "Sequential"
    assert window.input_errors() == {}


def test_the_file_button_names_the_file_s_own_factory(window, qtbot, tmp_path, file_dialogs):
    edit = _choose_user(window, qtbot)
    edit.setText("hf:resnet")  # not a file's spec: nothing of it is kept
    path = tmp_path / "net.py"
    path.write_text("import torch\n\n\ndef make_net():\n    return torch.nn.Linear(2, 2)\n")
    file_dialogs.answer(path)
    qtbot.mouseClick(window.findChild(QToolButton, "modelFileButton"), Qt.MouseButton.LeftButton)
    assert edit.text() == f"{path}:make_net"  # its one function; `build` where it has one
    assert [request.caption for request in file_dialogs.asked] == ["Your model's file"]


def test_a_bad_spec_is_refused_inline(window, qtbot):
    _choose_user(window, qtbot).setText("model.pt2:load")
    error = window.findChild(QLabel, "modelError")
    qtbot.waitUntil(error.isVisible, timeout=2000)
    assert "pickled code" in error.text()
    assert not window.runButton.isEnabled()


@pytest.mark.slow
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
    view = window.findChild(QWidget, "accuracyView")
    assert not view.findChild(QWidget, "flipBox").isVisibleTo(view)  # no answers to flip


# ---- completion of torchvision/timm names, through stand-in packages -------------------------

TORCHVISION_STAND_IN = """
import types

models = types.SimpleNamespace(list_models=lambda: ["resnet18", "mobilenet_v3_small"])
"""
TIMM_STAND_IN = """
def list_models():
    return ["vit_tiny_patch16_224", "resnet18"]
"""
BROKEN = 'raise RuntimeError("operator torchvision::nms does not exist")\n'


@pytest.fixture
def stand_ins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Write `torchvision` and `timm` packages (their bodies given) ahead of the real ones."""
    for name in ("torchvision", "timm"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))

    def write(torchvision: str, timm: str) -> None:
        for name, body in (("torchvision", torchvision), ("timm", timm)):
            (tmp_path / name).mkdir()
            (tmp_path / name / "__init__.py").write_text(body)

    return write


def _completions(window, prefix: str) -> list[str]:
    completer = window.findChild(QLineEdit, "modelSpecEdit").completer()
    completer.setCompletionPrefix(prefix)
    model = completer.completionModel()
    return [model.index(row, 0).data() for row in range(model.rowCount())]


def test_torchvision_and_timm_names_are_completed_when_they_import(window, qtbot, stand_ins):
    stand_ins(TORCHVISION_STAND_IN, TIMM_STAND_IN)
    _choose_user(window, qtbot)
    assert _completions(window, "resnet18") == ["torchvision:resnet18", "timm:resnet18"]
    assert _completions(window, "vit_") == ["timm:vit_tiny_patch16_224"]
    assert "hf:bert" in _completions(window, "hf:")
    hint = window.findChild(QLabel, "modelCompletionHint")
    assert hint.text() == "" and not hint.isVisible()


def test_no_names_and_a_one_line_hint_when_they_do_not_import(window, qtbot, stand_ins):
    stand_ins(BROKEN, "import torchvision\n")  # timm imports torchvision, as the real one does
    _choose_user(window, qtbot)
    assert _completions(window, "torchvision:") == [] and _completions(window, "timm:") == []
    assert "hf:resnet" in _completions(window, "hf:")  # the offline examples stay
    hint = window.findChild(QLabel, "modelCompletionHint")
    qtbot.waitUntil(hint.isVisible, timeout=2000)
    text = hint.text()
    assert "\n" not in text and text.startswith("No torchvision:/timm: names to complete: ")
    assert (
        "import torchvision failed (RuntimeError: operator torchvision::nms does not exist); "
        f"pip install torchvision matching torch {torch.__version__}"
    ) in text
    assert "import timm failed (RuntimeError: operator torchvision::nms does not exist)" in text
    # The note is about torchvision:/timm: specs only: beside hf:bert or a file it puzzled.
    spec = window.findChild(QLineEdit, "modelSpecEdit")
    for typed, shown in (
        ("hf:bert", False),
        ("models/my_model.py:build", False),
        ("timm:resnet18", True),
        ("torchvision:resnet18", True),
        ("", True),
    ):
        spec.setText(typed)
        assert hint.isVisible() == shown, typed
    assert hint.text() == text

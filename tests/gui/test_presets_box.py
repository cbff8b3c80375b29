"""presetCombo: built-in presets (tutorial first) and the user's own; broken files are skipped."""

from __future__ import annotations

import json

from PySide6.QtWidgets import QComboBox, QLabel

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.learning.presets import builtin_presets, load_preset, user_presets_dir
from autocast_explorer.gui import MainWindow
from autocast_explorer.gui.features.presets import box as presets_box
from autocast_explorer.gui.features.presets.box import CUSTOM_TEXT, USER_SUFFIX, PresetDetails


def combo_texts(combo: QComboBox) -> list[str]:
    return [combo.itemText(i) for i in range(combo.count())]


def test_each_preset_sets_exactly_its_config(window):
    combo = window.findChild(QComboBox, "presetCombo")
    presets = builtin_presets()
    texts = combo_texts(combo)
    assert "tutorial" in texts[0]
    assert [t for t in texts if t] == [p.name for p in presets]
    assert {p.id for p in presets} >= {"tutorial", "large-mlp", "batch-sweep", "float16"}
    for preset in presets:
        row = texts.index(preset.name)
        combo.setCurrentIndex(row)
        assert window.current_config() == preset.config, preset.id
        assert window.pending_sweep == preset.sweep, preset.id
        assert combo.currentIndex() == row  # still names the preset it set
        assert window.presets.chosen() is not None
        assert window.presets.chosen().id == preset.id
        description = window.findChild(QLabel, "presetDescription").text()
        assert description.startswith(preset.description)
        if preset.sweep is not None:
            assert f"sweep over {preset.sweep.param}" in description

    sweep = next(p for p in presets if p.sweep is not None)
    assert window.presets.choose(sweep.id) is not None
    assert window.pending_sweep.values == sweep.sweep.values


def test_the_combo_follows_the_controls(window):
    combo = window.presets.combo
    window.set_config(ExperimentConfig())  # the tutorial's example is the default experiment
    assert window.presets.chosen().id == "tutorial"
    assert combo.currentText() == window.presets.chosen().name
    assert window.presets.shown_text() == combo.currentText()
    window.batchSpin.setValue(3)
    assert combo.currentIndex() == -1
    assert combo.placeholderText() == CUSTOM_TEXT
    assert combo.currentText() == ""  # a placeholder is not an item…
    assert window.presets.shown_text() == CUSTOM_TEXT  # …but it is what the list shows
    assert window.presets.chosen() is None
    window.batchSpin.setValue(128)
    assert window.presets.chosen().id == "tutorial"


def test_user_presets_are_listed_and_a_broken_one_is_skipped_with_its_name(qtbot):
    folder = user_presets_dir()
    folder.mkdir(parents=True)
    good = {
        "schema": "autocast-explorer/preset/1",
        "name": "tiny lab",
        "description": "A very small model.",
        "config": {"widths": [32, 16, 4], "batch": 8, "min_time": 0.02},
    }
    (folder / "tiny-lab.json").write_text(json.dumps(good))
    (folder / "broken.json").write_text('{"schema": "autocast-explorer/preset/1", "name": ')
    (folder / "foreign.json").write_text(json.dumps({"schema": "autocast-explorer/result/1"}))
    (folder / "bad-batch.json").write_text(json.dumps({**good, "config": {"batch": 0}}))

    win = MainWindow(autoload=False)
    qtbot.addWidget(win)
    combo = win.findChild(QComboBox, "presetCombo")
    assert "tiny lab" + USER_SUFFIX in combo_texts(combo)
    message = win.findChild(QLabel, "presetMessage")
    assert not message.isHidden()
    text = message.text()
    assert "Skipped 3 preset files" in text
    assert f"{folder / 'broken.json'}: not valid JSON" in text
    assert f"{folder / 'foreign.json'}" in text and "result file, not a preset" in text
    assert f"{folder / 'bad-batch.json'}: config.batch" in text

    combo.setCurrentIndex(combo_texts(combo).index("tiny lab" + USER_SUFFIX))
    assert win.current_config() == ExperimentConfig(widths=(32, 16, 4), batch=8, min_time=0.02)


def test_save_as_preset_writes_the_config_atomically_and_lists_it(window, monkeypatch):
    config = ExperimentConfig(widths=(64, 32, 8), batch=16, head="softmax", min_time=0.05)
    window.set_config(config)
    monkeypatch.setattr(
        presets_box,
        "ask_preset_details",
        lambda parent, name, sweep: PresetDetails("My softmax lab", "Softmax on a small MLP."),
    )
    window.presets.saveAction.trigger()
    path = user_presets_dir() / "my-softmax-lab.json"
    saved = load_preset(path)
    assert saved.config == config
    assert saved.description == "Softmax on a small MLP."
    assert [p.name for p in path.parent.iterdir()] == ["my-softmax-lab.json"]  # no temp file
    assert window.presets.combo.currentText() == "My softmax lab" + USER_SUFFIX
    assert window.presets.chosen().id == "my-softmax-lab"


def test_saving_an_invalid_config_explains_and_writes_nothing(window, monkeypatch):
    asked = []
    monkeypatch.setattr(presets_box, "ask_preset_details", lambda *a: asked.append(a))
    window.widthsEdit.setText("32,,4")
    assert window.presets.save_as_preset() is None
    assert asked == []
    assert "fix widths first" in window.findChild(QLabel, "presetMessage").text()
    assert not user_presets_dir().exists()


def test_the_time_per_mode_does_not_change_the_preset_shown(window):
    """The tutorial at 0.2 s is still the tutorial (not the batch sweep, whose config it is)."""
    window.presets.choose("tutorial")
    window.set_config(window.current_config().replace(min_time=0.2))
    assert window.presets.chosen().id == "tutorial"
    window.set_config(ExperimentConfig(min_time=0.3))
    assert window.presets.chosen().id == "tutorial"
    window.presets.choose("batch-sweep")
    window.set_config(window.current_config().replace(min_time=0.5))
    assert window.presets.chosen().id == "batch-sweep"


def test_a_presets_claims_are_checked_against_its_run(window, qtbot):
    """The GRU preset's sentences, each marked with what the run on screen measured."""
    from autocast_explorer.core.learning.claims import check_claims, preset_claims
    from tests.gui.helpers import run_to_end

    claims = window.findChild(QLabel, "presetClaims")
    window.presets.choose("gru")
    assert not claims.isVisible() and window.presets.claim_checks() == []
    window.set_config(window.current_config().replace(min_time=0.02, threads=1))
    result = run_to_end(qtbot, window)
    expected = [c.line for c in check_claims(preset_claims("gru"), result)]
    assert window.presets.claim_checks() == expected and claims.isVisible()
    gru = next(la for la in result.layers if la.kind == "GRU")
    assert expected[0].startswith("✓ The GRU returns float32")  # a fact of torch, any CPU
    assert expected[1].startswith("✓ Inside it the matrix products run in bfloat16")
    assert f"{gru.autocast.compute.count('addmm', 'bfloat16')} addmm" in expected[1]
    # Another preset: nothing checked until its own run.
    window.presets.choose("tutorial")
    assert window.presets.claim_checks() == [] and not claims.isVisible()


def test_a_lesson_step_is_never_named_a_sweep_preset(window, qtbot):
    """A lesson sets the tutorial's config, which the width sweep's preset shares: the list
    named "width sweep" during the lesson. A sweep preset is named only with its sweep."""
    from tests.gui.helpers import RUN_TIMEOUT_MS

    width_sweep = window.presets.choose("width-sweep")
    assert window.presets.shown_text() == width_sweep.name
    assert window.pending_sweep == width_sweep.sweep
    window.lessonsAction.trigger()
    panel = window.lessonsPanel
    panel.go_to(0)
    with qtbot.waitSignal(window.experimentFinished, timeout=RUN_TIMEOUT_MS):
        assert panel.run_step()
        assert window.pending_sweep is None
        assert window.presets.chosen() is not None
        assert window.presets.chosen().id == "tutorial"
        assert window.presets.shown_text() != width_sweep.name
    # Choosing the sweep preset again names it, with its sweep.
    window.presets.choose("width-sweep")
    assert window.presets.shown_text() == width_sweep.name
    assert window.pending_sweep == width_sweep.sweep

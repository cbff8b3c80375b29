"""The experiment state: the one config a Run measures, whoever set it.

Every field set through the context, a preset or the saved settings survives an edit of
another input and the next Run, also a field no input shows; the inputs follow the state and
the state follows the inputs, and an edit core refuses never reaches it.
"""

from __future__ import annotations

import json

import pytest
from PySide6.QtWidgets import QComboBox

from autocast_explorer.core.experiment.config import ConfigError, ExperimentConfig
from autocast_explorer.core.learning.presets import make_preset, save_preset, user_presets_dir
from autocast_explorer.gui import MainWindow
from autocast_explorer.gui.window.settings import CONFIG_KEY, open_settings
from tests.gui.helpers import TINY, run_to_end

#: A model of the user's that takes token ids: `input_kind` and `vocab` have no input.
TOKENS = ExperimentConfig(model="tokens_model.py:build", input_kind="tokens", vocab=100, seq=16)


def test_fields_no_input_shows_are_listed(window):
    assert window.controls.unbound_fields() == ("input_kind", "vocab")


def test_a_field_no_input_shows_survives_an_edit_and_the_run(window, qtbot):
    # input_kind/vocab have no input; seed 2**40 is past what seedSpin can show (2**31 - 1).
    wanted = TINY.replace(input_kind="tokens", vocab=50, seed=2**40)
    window.context.set_config(wanted)
    window.batchSpin.setValue(TINY.batch + 1)  # an edit of another input
    started: list[ExperimentConfig] = []
    window.context.experimentStarted.connect(started.append)
    result = run_to_end(qtbot, window)
    assert started == [wanted.replace(batch=TINY.batch + 1)]
    assert (result.config.seed, result.config.batch) == (2**40, TINY.batch + 1)


def test_an_edit_sets_the_fields_of_its_input_on_the_state(window, qtbot):
    state = window.experiment_state
    before = state.config
    with qtbot.waitSignal(state.changed, timeout=1000) as changed:
        window.batchSpin.setValue(before.batch + 3)
    assert changed.args == [frozenset({"batch"})]
    assert state.config == before.replace(batch=before.batch + 3)
    window.widthsEdit.setText("32, 8, 4")
    assert state.config.widths == (32, 8, 4)
    assert window.widthsEdit.text() == "32, 8, 4"  # no echo rewrites what is being typed


def test_a_change_of_the_state_shows_in_the_inputs_once(window, qtbot):
    emitted: list[frozenset[str]] = []
    window.experiment_state.changed.connect(emitted.append)
    config = window.context.update_config(batch=6, dtype="float16", widths=(8, 4))
    assert emitted == [frozenset({"batch", "dtype", "widths"})]  # no echo from the inputs
    assert (window.batchSpin.value(), window.widthsEdit.text()) == (6, "8,4")
    assert window.controls.dtypeCombo.currentText() == "float16"
    assert window.current_config() == config == window.experiment_state.config
    window.experiment_state.update(mode="train")
    assert window.findChild(QComboBox, "modeCombo").currentData() == "train"
    assert window.controls.stepsSpin.isEnabled()


def test_an_invalid_edit_leaves_the_last_valid_config_and_run_off(window):
    state = window.experiment_state
    before = state.config
    window.widthsEdit.setText("32,,4")
    assert state.config == before
    assert window.input_errors() == {"widths": "empty entry in '32,,4'; use e.g. 256,256,10"}
    assert not window.runButton.isEnabled()
    with pytest.raises(ConfigError):
        window.current_config()
    window.batchSpin.setValue(before.batch + 1)  # valid alone, pending with the bad widths
    assert state.config == before and not window.runButton.isEnabled()
    window.widthsEdit.setText("32,8,4")
    assert state.config == before.replace(widths=(32, 8, 4), batch=before.batch + 1)
    assert window.input_errors() == {} and window.runButton.isEnabled()


def test_a_config_set_from_outside_replaces_an_invalid_edit(window):
    window.widthsEdit.setText("32,,4")
    window.set_config(TINY)  # the state does not change: the pending edit is dropped anyway
    assert window.widthsEdit.text() == "32,16,4"
    assert window.input_errors() == {} and window.runButton.isEnabled()


def test_update_config_refuses_a_bad_value_and_changes_nothing(window):
    before = window.experiment_state.config
    with pytest.raises(ConfigError, match="batch"):
        window.context.update_config(batch=0)
    assert window.experiment_state.config == before == window.current_config()


def test_restored_settings_go_through_the_state(qtbot):
    store = open_settings()
    store.setValue(CONFIG_KEY, json.dumps(TOKENS.to_dict()))
    store.sync()
    win = MainWindow(autoload=False)
    qtbot.addWidget(win)
    assert win.settingsKeeper.problems == []
    assert win.experiment_state.config == TOKENS == win.current_config()
    win.batchSpin.setValue(3)
    win.settingsKeeper.save()
    saved = ExperimentConfig.from_dict(json.loads(open_settings().value(CONFIG_KEY)))
    assert (saved.input_kind, saved.vocab, saved.batch) == ("tokens", 100, 3)
    win.settingsKeeper.resetAction.trigger()
    assert win.experiment_state.config == ExperimentConfig()


def test_a_preset_goes_through_the_state(qtbot):
    save_preset(
        make_preset("tokens lab", "Token ids.", TOKENS), user_presets_dir() / "tokens-lab.json"
    )
    win = MainWindow(autoload=False)
    qtbot.addWidget(win)
    win.presets.reload()
    emitted: list[frozenset[str]] = []
    win.experiment_state.changed.connect(emitted.append)
    win.presets.choose("tokens-lab")
    assert win.experiment_state.config == TOKENS == win.current_config()
    assert len(emitted) == 1 and {"model", "input_kind", "vocab"} <= emitted[0]


def test_a_change_made_while_an_edit_is_set_shows_in_the_inputs(window):
    state = window.experiment_state

    def seed_follows_batch(names: frozenset[str]) -> None:
        if "batch" in names:
            state.update(seed=state.config.batch * 10)

    state.changed.connect(seed_follows_batch)
    window.batchSpin.setValue(7)
    assert window.controls.seedSpin.value() == 70 == state.config.seed

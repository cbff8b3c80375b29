"""The window against bad stored settings, bad files and failing devices: every case ends in a
message that names what was wrong, and the window keeps working."""

from __future__ import annotations

import json
import os
import stat

from autocast_explorer.cli import main
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.gui import MainWindow
from autocast_explorer.gui.features.compare.window import CompareWindow
from autocast_explorer.gui.features.presentation.mode import PresentationState
from autocast_explorer.gui.window import settings as settings_module
from autocast_explorer.gui.window.settings import CONFIG_KEY, THEME_KEY, open_settings


def new_window(qtbot) -> MainWindow:
    win = MainWindow(autoload=False)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    return win


def store(key: str, value: str) -> None:
    settings = open_settings()
    settings.setValue(key, value)
    settings.sync()


def test_a_config_nested_8000_deep_falls_back_and_says_so(qtbot):
    store(CONFIG_KEY, "[" * 8000 + "]" * 8000)
    win = new_window(qtbot)
    assert win.settingsKeeper.problems == [
        "last config: nested too deeply to be a document of ours"
    ]
    assert win.messageBanner.isVisible()
    assert win.current_config() == ExperimentConfig()
    assert open_settings().value(CONFIG_KEY) is None  # dropped: the next start is clean


def test_a_config_with_nan_is_refused(qtbot):
    store(CONFIG_KEY, '{"widths": [8, 4], "atol": NaN}')
    win = new_window(qtbot)
    assert win.settingsKeeper.problems == [
        "last config: not valid JSON (NaN is not a number JSON allows)"
    ]


def test_any_exception_while_restoring_falls_back_and_names_the_key(qtbot, monkeypatch):
    store(THEME_KEY, "projector")

    def broken(_raw):
        raise RuntimeError("a reader bug")

    monkeypatch.setattr(settings_module, "parse_theme", broken)
    win = new_window(qtbot)
    assert win.settingsKeeper.problems == [f"{THEME_KEY}: unusable (RuntimeError)"]
    assert win.presentation.state().theme == PresentationState().theme
    assert open_settings().value(THEME_KEY) is None


def test_reset_settings_from_the_command_line_lets_the_window_start_clean(qtbot, capsys):
    store(CONFIG_KEY, "[" * 8000)
    assert main(["--reset-settings"]) == 0
    assert "Settings reset to defaults" in capsys.readouterr().out
    win = new_window(qtbot)
    assert win.settingsKeeper.problems == []


def test_saving_to_a_device_writes_it_and_a_full_device_is_an_error(qtbot):
    win = new_window(qtbot)
    assert win.write_file("/dev/null", "{}", "the result JSON")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    win.statusBar().clearMessage()
    assert not win.write_file("/dev/full", "x" * 100_000, "the result JSON")
    assert win.messageBanner.text() == (
        "Could not save the result JSON to /dev/full: No space left on device"
    )
    assert "Saved" not in win.statusBar().currentMessage()


def test_compare_window_names_bad_fields_and_strips_control_characters(qtbot, tmp_path):
    source = tmp_path / "good.json"
    assert (
        main(
            ["run", "--widths", "8,4", "--batch", "2", "--min-time", "0.01", "--json", str(source)]
        )
        == 0
    )
    good = json.loads(source.read_text())
    bad = dict(
        good, latency=dict(good["latency"], plain=dict(good["latency"]["plain"], median_ms=-0.36))
    )
    (tmp_path / "negative.json").write_text(json.dumps(bad))
    listed = dict(good, environment=dict(good["environment"], cpu_model=["AMD", "EPYC"]))
    (tmp_path / "listed.json").write_text(json.dumps(listed))
    (tmp_path / "nan.json").write_text(
        source.read_text().replace('"median_ms": ', '"median_ms": NaN, "x": ', 1)
    )
    escaped = dict(
        good, environment=dict(good["environment"], cpu_model="\x1b]0;title\x07\x1b[2JEvil CPU")
    )
    (tmp_path / "escaped.json").write_text(json.dumps(escaped))

    window = CompareWindow()
    qtbot.addWidget(window)
    errors = window.add_files(
        [str(tmp_path / n) for n in ("negative.json", "listed.json", "nan.json", "escaped.json")]
    )
    assert [e.problem for e in errors] == [
        "result: latency.plain.median_ms: expected a number ≥ 0",
        "result: environment.cpu_model: expected text",
        "result: not valid JSON (NaN is not a number JSON allows)",
    ]
    assert "negative.json: result: latency.plain.median_ms" in window.message.text()
    cells = " ".join(" ".join(row) for row in window.table_rows())
    assert "]0;title[2JEvil CPU" in cells
    assert not any(ch in cells for ch in "\x1b\x07")

"""explorer_user_files keeps every settings and preset file a window writes inside the test."""

from __future__ import annotations

import pytest

from autocast_explorer.core.learning.presets import user_presets_dir


@pytest.mark.slow
def test_the_window_saves_its_settings_in_the_test_s_folder(qtbot, explorer_user_files, tmp_path):
    from autocast_explorer.gui import MainWindow

    files = explorer_user_files
    assert files.settings_file.is_relative_to(tmp_path)
    assert files.presets_dir == user_presets_dir()
    assert files.presets_dir.is_relative_to(tmp_path)
    assert not files.settings_file.exists()  # a first start

    window = MainWindow(autoload=False)
    qtbot.addWidget(window)
    window.close()  # saves the config, layout and presentation state
    assert files.settings_file.is_file()
    assert "experiment" in files.settings_file.read_text(encoding="utf-8")

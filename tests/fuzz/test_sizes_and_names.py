"""Text is capped where it is shown (settings values, file text, error messages: "… N more
characters"), preset names in any script get files of their own, and numbers that are not
finite read back wherever the program writes them (null) but are refused in any other form.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autocast_explorer.cli import main
from autocast_explorer.core.documents.field_types import NullableNumbers, Numbers
from autocast_explorer.core.documents.model import Part, nan_if_none, read
from autocast_explorer.core.documents.reader import (
    MAX_SHOWN_CHARS,
    DocumentFormatError,
    cap_text,
)
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.result import ExperimentResult, ResultFormatError
from autocast_explorer.core.learning.presets import (
    load_preset,
    make_preset,
    preset_filename,
    save_preset,
)


# ---- caps ------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", [0, 1, MAX_SHOWN_CHARS, MAX_SHOWN_CHARS + 1, 10**6])
def test_cap_text_says_how_much_was_left_out(size):
    text = "x" * size
    capped = cap_text(text)
    if size <= MAX_SHOWN_CHARS:
        assert capped == text
    else:
        assert capped == "x" * MAX_SHOWN_CHARS + f"… {size - MAX_SHOWN_CHARS:,} more characters"


@pytest.mark.parametrize("size", [3000, 2 * 2**20])
def test_a_huge_autocast_error_is_capped_when_read(good_result, size):
    data = json.loads(json.dumps(good_result))
    data["autocast_error"] = "RuntimeError: " + "e" * size
    result = ExperimentResult.from_json(json.dumps(data))
    assert len(result.autocast_error) < MAX_SHOWN_CHARS + 40
    assert result.autocast_error.endswith("more characters")


@pytest.mark.parametrize("key", ["cpu_model", "torch_version"])
def test_a_huge_document_text_is_capped_when_read(good_result, key):
    data = json.loads(json.dumps(good_result))
    data["environment"][key] = "c" * 10**6
    result = ExperimentResult.from_json(json.dumps(data))
    assert len(getattr(result.environment, key)) < 25_000


@pytest.mark.parametrize("size", [10**4, 10**6])
def test_a_huge_error_message_is_one_capped_line(tmp_path, capsys, size):
    """A file name of a megabyte, echoed by the error line, is cut."""
    name = "n" * size
    assert main(["compare", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and len(err) < MAX_SHOWN_CHARS + 100
    assert err.rstrip().endswith("more characters")


@pytest.mark.parametrize("size", [10**5, 10**6])
def test_the_banner_caps_what_it_is_given(qtbot, size):
    from autocast_explorer.gui.shell.banner import BannerLabel

    banner = BannerLabel()
    qtbot.addWidget(banner)
    banner.setText("b" * size)
    assert banner.text().endswith(f"… {size - MAX_SHOWN_CHARS:,} more characters")


@pytest.mark.parametrize("key", ["presentation/theme", "presentation/font_scale"])
def test_a_megabyte_settings_value_is_refused_unread(qtbot, explorer_user_files, key):
    from autocast_explorer.gui import MainWindow
    from autocast_explorer.gui.window.settings import MAX_SETTING_CHARS, open_settings

    store = open_settings()
    store.setValue(key, "z" * 2**20)
    store.sync()
    window = MainWindow(autoload=False)
    qtbot.addWidget(window)
    problems = window.settingsKeeper.problems
    assert problems == [f"{key}: too long ({2**20:,} characters)"]
    assert len(window.messageBanner.text()) < MAX_SHOWN_CHARS + 100
    assert MAX_SETTING_CHARS < 2**20


# ---- preset names ----------------------------------------------------------------------------
NAMES = ["日本", "中文", "🙂", "😀", "Привет", "مرحبا", "a b", "A-B", "!!!", "x" * 200, "é", "e"]


def test_preset_names_in_any_script_get_distinct_files():
    files = [preset_filename(n) for n in NAMES]
    assert files[0] == "日本.json" and files[1] == "中文.json"
    assert files[2] != files[3] and files[2].startswith("preset-")
    assert files[6] == files[7] == "a-b.json"  # the same words: the same file (a replace asks)
    distinct = {n: f for n, f in zip(NAMES, files, strict=True) if n not in ("a b", "A-B")}
    assert len(set(distinct.values())) == len(distinct)
    assert all(len(f.encode()) <= 255 for f in files)


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=40))
def test_a_preset_file_name_is_safe_for_any_name(name):
    filename = preset_filename(name)
    assert filename.endswith(".json") and "/" not in filename and "\x00" not in filename
    assert not filename.startswith(".") and filename != ".json"
    assert len(filename.encode()) <= 255


@pytest.mark.parametrize("name", ["日本", "中文", "🙂", "😀"])
def test_saving_presets_in_other_scripts_keeps_each(tmp_path, name):
    for other in ("日本", "中文", "🙂", "😀"):
        preset = make_preset(other, "mine", ExperimentConfig(widths=(8, 4)))
        save_preset(preset, tmp_path / preset_filename(other))
    assert load_preset(tmp_path / preset_filename(name)).name == name
    assert len(list(tmp_path.iterdir())) == 4


# ---- numbers that are not finite -------------------------------------------------------------
class Losses(Part):
    """A list where null stands for a loss that was not finite (as `train.loss.*`)."""

    loss: NullableNumbers


class Times(Part):
    """A list of finite numbers (as `latency.*.times_ms`)."""

    times_ms: Numbers


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False))))
def test_a_nullable_number_list_reads_null_as_nan(values):
    loaded = [nan_if_none(v) for v in read(Losses, {"loss": values}, "train").loss]
    assert len(loaded) == len(values)
    for got, given_value in zip(loaded, values, strict=True):
        assert math.isnan(got) if given_value is None else got == given_value


@pytest.mark.parametrize("bad", ["nan", "inf", True, [1.0], {"a": 1}, "1.5"])
def test_a_nullable_number_list_refuses_other_forms(bad):
    with pytest.raises(DocumentFormatError, match=r"train: loss: expected a list of numbers"):
        read(Losses, {"loss": [1.0, bad]}, "train")


@pytest.mark.parametrize("bad", [None, "nan"])
def test_a_plain_number_list_still_refuses_null(bad):
    with pytest.raises(DocumentFormatError, match=r"latency: times_ms: expected a list of numbers"):
        read(Times, {"times_ms": [1.0, bad]}, "latency")


@pytest.mark.parametrize("form", ["NaN", "Infinity", "-Infinity"])
def test_a_bare_nan_token_in_a_loss_is_refused(good_result, form):
    text = json.dumps(good_result)
    data = json.loads(text)
    data["config"]["widths"] = [8, 6, 4]
    broken = json.dumps(data).replace('"seed": 0', f'"seed": {form}', 1)
    with pytest.raises(ResultFormatError, match="not valid JSON"):
        ExperimentResult.from_json(broken)

"""Stored settings are untrusted input: each bad value is one SettingsError naming the setting,
never a crash (the window then falls back to the default and names it in its banner)."""

from __future__ import annotations

import pytest

from autocast_explorer.gui.window.settings import (
    MAX_CONFIG_CHARS,
    SettingsError,
    parse_bool,
    parse_config,
    parse_int,
    parse_scale,
    parse_theme,
)

CONFIG_CASES = [
    ("[" * 8000 + "]" * 8000, "last config: nested too deeply"),
    ('{"a":' * 2000 + "1" + "}" * 2000, "last config: nested too deeply"),
    ('{"widths": [8, 4], "atol": NaN}', "last config: not valid JSON (NaN is not a number"),
    ('{"widths": [8, 4], "rtol": Infinity}', "last config: not valid JSON (Infinity is not"),
    ('{"widths": [8, 4], "atol": 1e999}', "last config: not valid JSON (1e999 is out of range)"),
    ('{"widths": "8,4"}', "last config: widths: must be a list of layer widths"),
    ('{"widths": [8, 4], "batch": 2.5}', "last config: batch: must be an integer ≥ 1"),
    ('{"widths": [8, 4], "threads": 100000}', "last config: threads: must be an integer in 1 …"),
    ('{"widths": [8, 4], "min_time": -1}', "last config: min_time: must be a number of seconds"),
    ('{"widths": [8, 4], "dtype": ["bfloat16"]}', "last config: dtype: must be one of"),
    ("[8, 4]", "last config: not a JSON object"),
    ("", "last config: file is empty"),
    ("{", "last config: not valid JSON (line 1"),
    ("x" * (MAX_CONFIG_CHARS + 1), "last config: too long"),
    (42, "last config: not a JSON text"),
    (["a"], "last config: not a JSON text"),
]

OTHER_CASES = [
    (parse_scale, "big", "text scale: 'big' is not a number"),
    (parse_scale, "nan", "text scale:"),
    (parse_scale, "inf", "text scale:"),
    (parse_scale, "1e309", "text scale:"),
    (parse_scale, "-1", "text scale:"),
    (parse_theme, "\x1b[2Jdark", "theme:"),
    (parse_theme, "", "theme:"),
    (lambda raw: parse_bool(raw, "controls hidden"), "maybe", "controls hidden: 'maybe'"),
    (lambda raw: parse_bool(raw, "controls hidden"), "", "controls hidden:"),
    (lambda raw: parse_int(raw, "lesson step", 0, 9), "3.5", "lesson step: '3.5' is not"),
    (lambda raw: parse_int(raw, "lesson step", 0, 9), "-1", "lesson step: -1 is not between"),
    (lambda raw: parse_int(raw, "lesson step", 0, 9), "9" * 5000, "lesson step:"),
]


@pytest.mark.parametrize(("raw", "expected"), CONFIG_CASES, ids=[e for _, e in CONFIG_CASES])
def test_a_bad_stored_config_is_one_settings_error(raw, expected):
    with pytest.raises(SettingsError) as info:
        parse_config(raw)
    assert str(info.value).startswith(expected)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("parse", "raw", "expected"), OTHER_CASES, ids=[f"{e} {r!r}"[:50] for _, r, e in OTHER_CASES]
)
def test_a_bad_stored_value_is_one_settings_error(parse, raw, expected):
    with pytest.raises(SettingsError) as info:
        parse(raw)
    message = str(info.value)
    assert message.startswith(expected)
    assert "\n" not in message and "\x1b" not in message

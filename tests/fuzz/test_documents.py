"""Bad documents, table-driven and generated: every reader refuses with the document kind and
the field path, never a traceback or a Python internal; text from a file never carries control
characters to a terminal or a label.

`compare` gets each corrupted result file (exit 2, one line); the readers of sweeps, probes,
presets and the window's stored config get theirs directly; hypothesis then throws arbitrary
JSON values and configs at the same readers.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autocast_explorer.cli import main
from autocast_explorer.core.documents.reader import DocumentFormatError, parse_json
from autocast_explorer.core.experiment.config import ConfigError, ExperimentConfig
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.learning.presets import PresetError, parse_preset
from autocast_explorer.core.numerics.opresult import ProbeResult
from autocast_explorer.core.sweeps.result import SweepResult
from tests.fuzz.conftest import snapshot


def _set(doc: dict, path: str, value: Any) -> dict:
    """A copy of `doc` with the dotted `path` (list indexes as numbers) set to `value`."""
    doc = copy.deepcopy(doc)
    *parents, last = path.split(".")
    node: Any = doc
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return doc


def _drop(doc: dict, path: str) -> dict:
    doc = copy.deepcopy(doc)
    *parents, last = path.split(".")
    node: Any = doc
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    del node[last]
    return doc


#: (field path, bad value, what the message must say after "result: ").
FIELD_CASES: list[tuple[str, Any, str]] = [
    ("latency.plain.median_ms", -0.36, "latency.plain.median_ms: expected a number ≥ 0"),
    ("latency.plain.median_ms", "fast", "latency.plain.median_ms: expected a number ≥ 0"),
    ("latency.plain.median_ms", None, "latency.plain.median_ms: expected a number ≥ 0"),
    ("latency.autocast.p25_ms", -1, "latency.autocast.p25_ms: expected a number ≥ 0"),
    ("latency.autocast.cold_ms", [1], "latency.autocast.cold_ms: expected a number ≥ 0"),
    ("latency.plain.samples", 2.5, "latency.plain.samples: expected a whole number ≥ 0"),
    ("latency.plain.samples", "7", "latency.plain.samples: expected a whole number ≥ 0"),
    ("latency.plain.samples", True, "latency.plain.samples: expected a whole number ≥ 0"),
    ("latency.plain.block_size", 0, "latency.plain.block_size: expected a whole number ≥ 1"),
    (
        "latency.plain.times_ms",
        [1.0, -2.0],
        "latency.plain.times_ms: expected a list of numbers ≥ 0",
    ),
    ("latency.plain.times_ms", "1,2", "latency.plain.times_ms: expected a list of numbers ≥ 0"),
    ("environment.cpu_model", ["AMD", "EPYC"], "environment.cpu_model: expected text"),
    ("environment.cpu_flags", "avx2 fma", "environment.cpu_flags: expected a list of texts"),
    ("environment.cpu_flags", [1, 2], "environment.cpu_flags: expected a list of texts"),
    ("environment.cores", "many", "environment.cores: expected a whole number ≥ 0"),
    ("environment.threads", -2, "environment.threads: expected a whole number ≥ 0"),
    ("environment.mkldnn", "yes", "environment.mkldnn: expected true or false"),
    ("environment.extra", [], "environment.extra: expected a JSON object"),
    ("environment", [], "environment: expected a JSON object"),
    ("agreement.rows", 16.7, "agreement.rows: expected a whole number ≥ 0"),
    ("agreement.agree", -1, "agreement.agree: expected a whole number ≥ 0"),
    ("agreement.agree", 10**6, "agreement.agree: expected at most `rows`"),
    ("agreement.fraction", 2.0, "agreement.fraction: expected a number in 0 … 1"),
    ("agreement.atol", -0.1, "agreement.atol: expected a number ≥ 0"),
    ("agreement.allclose", 1, "agreement.allclose: expected true or false"),
    ("agreement.histogram.counts", [1.5], "agreement.histogram.counts: expected a list of whole"),
    ("agreement.histogram.edges", "0,1", "agreement.histogram.edges: expected a list of numbers"),
    ("agreement.topk.k", 0, "agreement.topk.k: expected a whole number ≥ 1"),
    ("agreement.topk.fraction", 1.5, "agreement.topk.fraction: expected a number in 0 … 1"),
    ("agreement.flips", {"row": 1}, "agreement.flips: expected a list"),
    ("agreement.flip_rate_by_margin", "none", "agreement.flip_rate_by_margin: expected a list"),
    ("config.widths", "8,6,4", "config: widths: must be a list of layer widths"),
    ("config.batch", 0, "config: batch: must be an integer ≥ 1"),
    ("config.atol", None, "config: atol: must be a number"),
    ("config", [], "config: expected a JSON object"),
    ("warnings", {"a": 1}, "warnings: expected a list of texts"),
    ("warnings", "careful", "warnings: expected a list of texts"),
    ("created", 12, "created: expected text"),
    ("flops_per_forward", -5, "flops_per_forward: expected a whole number ≥ 0"),
    ("flops_per_forward", 1.5, "flops_per_forward: expected a whole number ≥ 0"),
    ("layers", {"fc1": {}}, "layers: expected a list"),
    ("layers.0.name", 5, "layers[0].name: expected text"),
    ("layers.0.out_shape", [4, -6], "layers[0].out_shape: expected a list of whole numbers ≥ 0"),
    ("layers.0", "fc1", "layers[0]: expected a JSON object"),
    ("output_dtype", "bfloat16", "output_dtype: expected a JSON object"),
    ("schema", "autocast-explorer/sweep/1", "is a sweep file"),
    ("schema", 1, "schema: expected text"),
    ("latency", None, "latency: expected a JSON object"),
    ("guard.estimated_forward_ms", -2.5, "guard.estimated_forward_ms: expected a number ≥ 0"),
    ("guard.basis", ["linear"], "guard.basis: expected text"),
    ("guard", "2 ms", "guard: expected a JSON object"),
]

#: Raw texts (not JSON values): (text or a function of the good document's text, message).
TEXT_CASES: list[tuple[Any, str]] = [
    (lambda t: t.replace('"median_ms": ', '"median_ms": NaN, "x": ', 1), "NaN is not a number"),
    (lambda t: t.replace('"median_ms": ', '"median_ms": -Infinity, "x": ', 1), "-Infinity is not"),
    (lambda t: t.replace('"median_ms": ', '"median_ms": Infinity, "x": ', 1), "Infinity is not"),
    (lambda t: t.replace('"median_ms": ', '"median_ms": 1e999, "x": ', 1), "1e999 is out of range"),
    (lambda t: t.replace('"cores": ', '"cores": ' + "9" * 5000 + ', "x": ', 1), "not valid JSON"),
    (lambda t: t[: len(t) // 2], "not valid JSON (line"),
    ("", "file is empty"),
    ("   \n", "file is empty"),
    ("[" * 8000 + "]" * 8000, "nested too deeply"),
    ('{"a": ' * 5000 + "1" + "}" * 5000, "nested too deeply"),
    ("[1, 2]", "expected a JSON object"),
    ('"just text"', "expected a JSON object"),
    ("null", "expected a JSON object"),
    (b"\xff\xfe{}", "not UTF-8"),
    ("\x00\x01 hello", "not valid JSON"),
    ("{}", "schema: missing"),
]


def _compare_refuses(tmp_path, capsys, content: str | bytes) -> str:
    path = tmp_path / "bad.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    before = snapshot(tmp_path)
    capsys.readouterr()
    code = main(["compare", str(path)])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == ""
    assert err.count("\n") == 1 and err.startswith(f"error: {path}: "), err
    assert "Traceback" not in err and "object has no attribute" not in err
    assert snapshot(tmp_path) == before
    return err


@pytest.mark.parametrize(
    ("path", "value", "expected"), FIELD_CASES, ids=[f"{p}={v!r}"[:60] for p, v, _ in FIELD_CASES]
)
def test_compare_refuses_a_bad_field_by_kind_and_path(
    good_result, tmp_path, capsys, path, value, expected
):
    err = _compare_refuses(tmp_path, capsys, json.dumps(_set(good_result, path, value)))
    if expected != "is a sweep file":
        assert f": result: {expected}" in err


@pytest.mark.parametrize(
    "path", ["latency", "agreement", "layers", "output_dtype", "config", "schema"]
)
def test_compare_refuses_a_missing_section(good_result, tmp_path, capsys, path):
    err = _compare_refuses(tmp_path, capsys, json.dumps(_drop(good_result, path)))
    assert f": result: {path}: missing" in err


@pytest.mark.parametrize(("content", "expected"), TEXT_CASES, ids=[m for _, m in TEXT_CASES])
def test_compare_refuses_bad_text(good_result, tmp_path, capsys, content, expected):
    text = json.dumps(good_result)
    err = _compare_refuses(tmp_path, capsys, content(text) if callable(content) else content)
    assert expected in err


def test_control_characters_never_reach_the_terminal(good_result, tmp_path, capsys):
    doc = _set(good_result, "environment.cpu_model", "\x1b]0;pwned\x07\x1b[2JEvil\u202eCPU\r\n")
    doc = _set(doc, "environment.torch_version", "2.\x1b[31m13")
    path = tmp_path / "escape\x1b[2J.json"
    path.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["compare", str(path)]) == 0
    out = capsys.readouterr().out
    assert "EvilCPU" in out.replace(" ", "")
    assert not any(ch in out for ch in "\x1b\x07\r\u202e")
    loaded = ExperimentResult.from_json(json.dumps(doc))
    assert loaded.environment.cpu_model == "]0;pwned[2JEvilCPU  "
    assert loaded.environment.label().isprintable()


# ---- the other document kinds ----------------------------------------------------------------
def test_each_reader_names_its_document_kind():
    bad = '{"schema": 1}'
    for reader, kind in (
        (ExperimentResult.from_json, "result"),
        (SweepResult.from_json, "sweep"),
        (ProbeResult.from_json, "probe"),
    ):
        with pytest.raises(DocumentFormatError) as info:
            reader(bad)
        assert str(info.value) == f"{kind}: schema: expected text"
        assert info.value.kind == kind
    with pytest.raises(PresetError, match=r"p\.json: not valid JSON \(NaN is not a number"):
        parse_preset('{"schema": NaN}', "p.json")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"schema": "autocast-explorer/ops/1", "dtype": NaN}', "NaN is not a number"),
        ('{"schema": "autocast-explorer/ops/1", "dtype": "int8"}', "dtype: expected one of"),
        ('{"schema": "autocast-explorer/ops/1", "dtype": "bfloat16"}', "environment: missing"),
        (
            '{"schema": "autocast-explorer/ops/1", "dtype": "bfloat16", "environment": {},'
            ' "ops": "softmax"}',
            "ops: expected a list",
        ),
        (
            '{"schema": "autocast-explorer/ops/1", "dtype": "bfloat16", "environment": {},'
            ' "ops": [{"name": "mm", "policy": "lower", "cases": {"a": {"in": "x"}}}]}',
            "ops[0].cases.a.in: expected a list of texts",
        ),
        (
            '{"schema": "autocast-explorer/ops/1", "dtype": "bfloat16", "environment": {},'
            ' "ops": [{"name": "mm", "policy": "lower",'
            ' "cases": {"a": {"in": [], "casts": 2.5}}}]}',
            "ops[0].cases.a.casts: expected a whole number ≥ 0",
        ),
    ],
)
def test_probe_files_are_read_strictly(text, expected):
    with pytest.raises(DocumentFormatError) as info:
        ProbeResult.from_json(text)
    assert str(info.value).startswith("probe: ")
    assert expected in str(info.value)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda d: d["points"][0]["latency"]["plain"].update(median_ms=-1),
            "expected a number ≥ 0",
        ),
        (lambda d: d["points"][0].update(batch=2.5), "points[0].batch: expected a whole number"),
        (lambda d: d.update(values="1,8"), "values: expected a list of numbers"),
        (lambda d: d["environment"].update(cpu_model=["x"]), "environment.cpu_model: expected"),
        (lambda d: d.update(warnings={"w": 1}), "warnings: expected a list of texts"),
    ],
)
def test_sweep_files_are_read_strictly(change, expected):
    doc = _sweep_doc()
    change(doc)
    with pytest.raises(DocumentFormatError) as info:
        SweepResult.from_json(json.dumps(doc))
    assert str(info.value).startswith("sweep: ")
    assert expected in str(info.value)


_SWEEP: list[dict] = []


def _sweep_doc() -> dict:
    if not _SWEEP:
        from autocast_explorer.core.sweeps.runner import run_spec
        from autocast_explorer.core.sweeps.spec import SweepSpec

        config = ExperimentConfig(widths=(8, 4), batch=2, min_time=0.005)
        result = run_spec(config, SweepSpec("batch", (1, 2)), probe_onednn=False)
        _SWEEP.append(json.loads(result.to_json()))
    return copy.deepcopy(_SWEEP[0])


# ---- generated input -------------------------------------------------------------------------
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
FAST_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@FAST_SETTINGS
@given(JSON_VALUES)
def test_any_json_value_is_a_result_or_a_refusal(value):
    for reader in (ExperimentResult.from_dict, SweepResult.from_dict, ProbeResult.from_dict):
        with pytest.raises(DocumentFormatError):
            reader(value)


@FAST_SETTINGS
@given(path=st.sampled_from([p for p, _, _ in FIELD_CASES]), value=JSON_VALUES)
def test_any_value_in_any_field_is_read_or_refused_by_kind(good_result, path, value):
    doc = _set(good_result, path, value)
    try:
        ExperimentResult.from_dict(doc)
    except DocumentFormatError as exc:
        assert str(exc).startswith("result: ")
        assert "object has no attribute" not in str(exc)


@FAST_SETTINGS
@given(st.text(max_size=200))
def test_any_text_parses_or_is_refused(text):
    try:
        parse_json(text)
    except DocumentFormatError as exc:
        assert "\n" not in str(exc)


CONFIG_FIELDS = {
    "widths": st.lists(st.integers(-5, 2**22), max_size=70) | JSON_VALUES,
    "batch": st.integers(-5, 10**6) | JSON_VALUES,
    "threads": st.none() | st.integers(-5, 10**6) | JSON_VALUES,
    "atol": st.floats() | JSON_VALUES,
    "rtol": st.floats() | JSON_VALUES,
    "input_scale": st.floats() | JSON_VALUES,
    "min_time": st.floats() | JSON_VALUES,
    "memory_budget_mb": st.none() | st.floats() | JSON_VALUES,
    "dtype": st.sampled_from(["bfloat16", "float16", "float32", ""]) | JSON_VALUES,
    "seed": st.integers(-(2**64), 2**64) | JSON_VALUES,
}


@FAST_SETTINGS
@given(st.fixed_dictionaries({}, optional=CONFIG_FIELDS))
def test_any_config_is_valid_or_one_config_error(data):
    """Every accepted config holds finite, in-range values that JSON can store."""
    try:
        config = ExperimentConfig.from_dict(data)
    except ConfigError as exc:
        assert exc.field in {*CONFIG_FIELDS, "config"}
        assert "\n" not in str(exc)
        return
    round_trip = json.loads(json.dumps(config.to_dict(), allow_nan=False))
    assert ExperimentConfig.from_dict(round_trip) == config
    assert 0 <= config.atol <= 1e6 and 0 <= config.rtol <= 1e6


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("ops", [{"mode": "plain"}]),
        ("ops", "aten.mm"),
        ("casts", []),
        ("layers.0.error", []),
        ("layers.0.error", {"max_abs": "big"}),
    ],
)
def test_nested_parts_name_their_path_not_python_internals(good_result, path, value):
    doc = _set(good_result, path, value)
    if path in ("ops", "casts") and "casts" not in doc:
        doc["casts"] = {"count": 0, "bytes": 0}
    with pytest.raises(DocumentFormatError) as info:
        ExperimentResult.from_dict(doc)
    message = str(info.value)
    assert message.startswith("result: ")
    assert "has no attribute" not in message and "object is not" not in message

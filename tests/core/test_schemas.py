"""The published JSON Schemas: shipped, current, valid, and as strict as the readers.

(Every document the suite writes is validated by the root conftest; these tests pin the
schemas themselves.)
"""

import copy
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from autocast_explorer.core.documents.resources import schemas_dir
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.learning.presets import PresetError, builtin_presets, parse_preset
from autocast_explorer.core.numerics.opresult import ProbeResult
from autocast_explorer.core.sweeps.result import SweepResult
from autocast_explorer.core.sweeps.runner import run_spec
from autocast_explorer.core.sweeps.spec import SweepSpec
from tests.schema_check import SCHEMA_FILES, SchemaViolation, strict_loads, validator, violations

ROOT = Path(__file__).resolve().parents[2]
TINY = ExperimentConfig(widths=(16, 8, 4), batch=4, min_time=0.01)


@pytest.fixture(scope="module")
def result_doc():
    return json.loads(run_experiment(TINY).to_json())


@pytest.fixture(scope="module")
def sweep_doc():
    return json.loads(run_spec(TINY, SweepSpec("batch", (1, 4)), probe_onednn=False).to_json())


@pytest.mark.process
def test_schemas_ship_in_the_package_and_are_current():
    assert sorted(p.name for p in schemas_dir().glob("*.schema.json")) == sorted(
        SCHEMA_FILES.values()
    )
    check = [sys.executable, str(ROOT / "tools" / "write_schemas.py"), "--check"]
    done = subprocess.run(check, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("tag", sorted(SCHEMA_FILES))
def test_each_schema_is_draft_2020_12_and_names_its_tag(tag):
    schema = validator(tag).schema  # check_schema ran when the validator was made
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["schema"] == {"const": tag}
    assert schema["$id"] == "urn:" + tag.replace("/", ":")


def test_config_in_the_schemas_is_exactly_the_experiment_config():
    fields = {f.name for f in dataclasses.fields(ExperimentConfig)}
    for tag in ("autocast-explorer/result/1", "autocast-explorer/sweep/1"):
        assert set(validator(tag).schema["$defs"]["config"]["properties"]) == fields, tag
    preset_config = validator("autocast-explorer/preset/1").schema["$defs"]["config"]
    assert set(preset_config["properties"]) == fields
    assert preset_config["additionalProperties"] is False


def test_builtin_preset_files_validate():
    presets = builtin_presets()
    assert len(presets) >= 6
    for preset in presets:
        assert violations(json.loads(preset.path.read_text())) == [], preset.path


def test_non_finite_tokens_are_refused_before_the_schema():
    with pytest.raises(SchemaViolation, match="NaN is not JSON"):
        strict_loads('{"x": NaN}')


def _mutated(document, path, value):
    """A deep copy with the value at `path` (keys and indexes) replaced; ... deletes it."""
    doc = copy.deepcopy(document)
    *parents, last = path
    target = doc
    for key in parents:
        target = target[key]
    if value is ...:
        del target[last]
    else:
        target[last] = value
    return doc


def _reader_accepts(read, document) -> bool:
    try:
        read(json.dumps(document))
    except ValueError:
        return False
    return True


RESULT_CASES = [
    (("latency", "plain", "median_ms"), "fast", False),
    (("latency", "plain", "median_ms"), None, False),
    (("latency", "autocast"), ..., False),
    (("config", "batch"), 0, False),
    (("config", "widths"), [16], False),
    (("config", "widths"), [16, 2.5, 4], False),
    (("config", "dtype"), "float64", False),
    (("config", "min_time"), 0, False),
    (("config", "threads"), None, True),
    (("config", "memory_budget_mb"), -1, False),
    (("config", "newer_field"), 1, True),  # readers ignore keys they do not know
    (("schema",), "autocast-explorer/sweep/1", False),
    (("layers",), ..., False),
    (("layers", 0, "plain", "out"), 16, False),
    (("agreement", "allclose"), "yes", False),
    (("agreement", "max_abs_diff"), None, True),  # a NaN difference is written null
    (("agreement", "fraction"), None, False),
    (("flops_per_forward",), "many", False),
    (("warnings",), ..., True),
]


@pytest.mark.parametrize(("path", "value", "valid"), RESULT_CASES)
def test_result_schema_refuses_what_the_reader_refuses(result_doc, path, value, valid):
    doc = _mutated(result_doc, path, value)
    assert (violations(doc, "autocast-explorer/result/1") == []) is valid
    assert _reader_accepts(ExperimentResult.from_json, doc) is valid


def test_result_schema_wants_integers_where_integers_go(result_doc):
    doc = _mutated(result_doc, ("latency", "plain", "samples"), 3.5)
    assert violations(doc) == ["$.latency.plain.samples: 3.5 is not of type 'integer'"]
    assert violations(_mutated(result_doc, ("latency", "plain", "samples"), 3)) == []


SWEEP_CASES = [
    (("param",), "depth", False),
    (("values",), [1, 1], False),
    (("values",), [1, 0], False),
    (("points", 0, "index"), -1, False),
    (("points", 0, "widths"), [16], False),
    (("points", 0, "latency", "speedup"), None, True),
    (("points", 0, "gflops"), ..., False),
    (("crossover",), ..., False),
    (("verdict", "cores"), 2.5, False),
    (("verdict", "onednn"), None, True),
    (("roofline", "peaks", "float32", "lanes"), 0, False),
    (("environment",), ..., False),
]


@pytest.mark.parametrize(("path", "value", "valid"), SWEEP_CASES)
def test_sweep_schema_refuses_what_the_reader_refuses(sweep_doc, path, value, valid):
    doc = _mutated(sweep_doc, path, value)
    assert (violations(doc, "autocast-explorer/sweep/1") == []) is valid
    assert _reader_accepts(SweepResult.from_json, doc) is valid


def test_grid_sweeps_need_their_widths(sweep_doc):
    doc = _mutated(sweep_doc, ("param",), "batch,width")
    assert "$: 'width_values' is a required property" in violations(doc)


PRESET = {
    "schema": "autocast-explorer/preset/1",
    "name": "mine",
    "description": "Mine.",
    "config": {"widths": [16, 8, 4], "batch": 4},
    "sweep": {"param": "batch", "values": [1, 4]},
}

PRESET_CASES = [
    ((), None, True),
    (("colour",), "red", False),
    (("config", "bach"), 4, False),
    (("config", "batch"), -1, False),
    (("name",), "  ", False),
    (("name",), "two\nlines", False),
    (("name",), "x" * 81, False),
    (("description",), ..., False),
    (("sweep",), None, True),
    (("sweep", "param"), "depth", False),
    (("sweep", "values"), [4], False),
    (("sweep", "steps"), 3, False),
]


@pytest.mark.parametrize(("path", "value", "valid"), PRESET_CASES)
def test_preset_schema_refuses_what_the_loader_refuses(path, value, valid):
    doc = _mutated(PRESET, path, value) if path else PRESET
    assert (violations(doc, "autocast-explorer/preset/1") == []) is valid
    try:
        parse_preset(json.dumps(doc))
        accepted = True
    except PresetError:
        accepted = False
    assert accepted is valid


def test_probe_schema_refuses_what_the_reader_refuses():
    doc = {
        "schema": "autocast-explorer/ops/1",
        "dtype": "bfloat16",
        "environment": {"torch_version": "2.13.0"},
        "ops": [
            {
                "name": "linear",
                "policy": "lower",
                "why": "measured",
                "error": None,
                "cases": {"float32": {"in": ["float32"], "out": "bfloat16", "casts": 1}},
            }
        ],
    }
    assert violations(doc) == []
    assert ProbeResult.from_dict(doc).op("linear").out("float32") == "bfloat16"
    for path in (("ops",), ("ops", 0, "cases"), ("ops", 0, "name"), ("environment",)):
        bad = _mutated(doc, path, ...)
        assert violations(bad) != [], path
        assert not _reader_accepts(ProbeResult.from_json, bad), path

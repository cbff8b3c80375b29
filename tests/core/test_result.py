import json

import pytest

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.result import SCHEMA, ExperimentResult, ResultFormatError


@pytest.fixture(scope="module")
def result():
    return run_experiment(ExperimentConfig(widths=(32, 16, 4), batch=8, min_time=0.02))


def test_json_uses_the_documented_names(result):
    data = json.loads(result.to_json())
    assert data["schema"] == SCHEMA == "autocast-explorer/result/1"
    assert set(data["config"]) >= {
        "widths",
        "batch",
        "seed",
        "dtype",
        "threads",
        "activation",
        "head",
        "atol",
    }
    assert data["config"]["widths"] == [32, 16, 4]
    assert "native_bf16" in data["environment"]
    for mode in ("plain", "autocast"):
        assert set(data["latency"][mode]) >= {
            "median_ms",
            "p25_ms",
            "p75_ms",
            "iqr_ms",
            "samples",
            "cold_ms",
        }
    assert data["latency"]["speedup"] == pytest.approx(result.speedup)
    assert data["output_dtype"] == {"plain": "float32", "autocast": "bfloat16"}
    assert {k: v for k, v in data["layers"][0].items() if k != "error"} == {
        "name": "fc1",
        "kind": "Linear",
        "out_shape": [8, 16],
        # What the layer computed in: its one addmm, and autocast's three casts (the float32
        # input, the weight and the bias) dispatched inside it.
        "plain": {
            "in": "float32",
            "out": "float32",
            "compute_dtypes": {"aten.addmm.default": {"float32": 1}},
            "casts": 0,
        },
        "autocast": {
            "in": "float32",
            "out": "bfloat16",
            "compute_dtypes": {"aten.addmm.default": {"bfloat16": 1}},
            "casts": 3,
        },
    }
    assert set(data["agreement"]) >= {
        "rows",
        "agree",
        "fraction",
        "max_abs_diff",
        "mean_abs_diff",
        "allclose",
        "atol",
        "cosine",
    }
    assert data["agreement"]["rows"] == 8


def test_json_round_trip_is_lossless(result):
    again = ExperimentResult.from_json(result.to_json())
    assert again == result
    assert again.to_dict() == result.to_dict()


def test_csv_has_one_row_per_mode(result):
    lines = result.to_csv().splitlines()
    assert lines[0].startswith("mode,dtype,median_ms")
    assert lines[1].startswith("plain,float32,")
    assert lines[2].startswith("autocast,bfloat16,")
    assert f"{result.speedup:.4f}" in lines[2]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        (b"  \n", "empty"),
        (b"\xff\xfe{", "not a text file .not UTF-8: byte 0xff at 0"),
        ("{", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"schema": "something/else/1"}', "schema"),
    ],
)
def test_bad_documents_are_refused_with_a_reason(text, fragment):
    with pytest.raises(ResultFormatError, match=fragment):
        ExperimentResult.from_json(text)


def test_truncated_and_wrongly_typed_documents_name_the_field(result):
    text = result.to_json()
    with pytest.raises(ResultFormatError, match="not valid JSON"):
        ExperimentResult.from_json(text[: len(text) // 2])
    data = result.to_dict()
    data["latency"]["plain"]["median_ms"] = "fast"
    with pytest.raises(ResultFormatError, match=r"latency\.plain\.median_ms: expected a number"):
        ExperimentResult.from_dict(data)
    data = result.to_dict()
    del data["agreement"]
    with pytest.raises(ResultFormatError, match="agreement: missing"):
        ExperimentResult.from_dict(data)
    data = result.to_dict()
    data["config"]["batch"] = 0
    with pytest.raises(ResultFormatError, match="config: batch"):
        ExperimentResult.from_dict(data)


def test_float16_overflow_writes_strict_json_and_reads_back():
    """Inputs ×1e5 overflow float16 (max 65504): NaN logits; JSON has no NaN, so null."""
    import math

    overflow = run_experiment(
        ExperimentConfig(
            widths=(16, 8, 4), batch=16, dtype="float16", input_scale=1e5, min_time=0.02
        )
    )
    assert math.isnan(overflow.agreement.max_abs_diff)
    text = overflow.to_json()
    data = json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in JSON"))
    assert data["agreement"]["max_abs_diff"] is None
    assert data["agreement"]["cosine"] is None
    again = ExperimentResult.from_json(text)
    assert math.isnan(again.agreement.max_abs_diff)
    assert again.agreement.agree == overflow.agreement.agree


def test_a_file_written_before_the_optional_sections_still_loads(result):
    """Files from earlier versions lack what was added since: they load with the defaults."""
    data = json.loads(result.to_json())
    for key in ("created", "warnings", "ops", "casts", "ops_diff", "casts_by_grad_mode", "guard"):
        data.pop(key, None)
    data["config"].pop("model", None)
    for mode in ("plain", "autocast"):
        for key in ("block_size", "times_ms", "gflops"):
            data["latency"][mode].pop(key)
    for key in ("rtol", "topk", "flips", "flip_rate_by_margin"):
        data["agreement"].pop(key)
    for layer in data["layers"]:
        layer.pop("out_shape")
        layer.pop("error")
    data["environment"] = {"torch_version": "2.4.0"}
    old = ExperimentResult.from_json(json.dumps(data))
    assert old.plain.median_ms == result.plain.median_ms
    assert (old.plain.block_size, old.plain.times_ms) == (1, ())
    assert old.agreement.rtol == 1e-5 and old.agreement.topk is None
    assert old.layers[0].out_shape == () and old.layers[0].error is None
    assert (old.op_trace, old.guard, old.created, old.warnings) == (None, None, "", ())
    assert old.environment.torch_version == "2.4.0" and old.environment.cpu_model == "?"
    assert old.config.model == "mlp"


def test_a_failed_autocast_side_is_read_back_as_a_finding(result):
    data = json.loads(result.to_json())
    data["autocast_error"] = "RuntimeError: not implemented for 'BFloat16'"
    data["latency"]["autocast"] = data["agreement"] = data["output_dtype"]["autocast"] = None
    data["latency"]["speedup"] = None
    for layer in data["layers"]:
        layer["autocast"] = None
    failed = ExperimentResult.from_json(json.dumps(data))
    assert failed.autocast_failed and failed.autocast is None and failed.agreement is None
    assert json.loads(failed.to_json())["autocast_error"] == data["autocast_error"]
    del data["autocast_error"]
    with pytest.raises(ResultFormatError, match=r"^result: latency\.autocast: expected a JSON"):
        ExperimentResult.from_json(json.dumps(data))

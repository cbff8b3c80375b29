"""run_experiment's issue-6 measurements: per-layer error, deeper agreement, op trace, JSON."""

import json
import math

import pytest
import torch

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.model import build
from autocast_explorer.core.experiment.result import ExperimentResult, ResultFormatError
from autocast_explorer.core.numerics.layer_error import layer_error

FAST = {"min_time": 0.02}


@pytest.fixture(scope="module")
def small():
    return run_experiment(ExperimentConfig(widths=(8, 4, 2), batch=3, topk=2, **FAST))


def test_layer_errors_equal_a_direct_computation(small):
    model, x = build(small.config)
    with torch.no_grad():
        ref1 = model.fc1(x)
        ref2 = model.fc2(model.relu1(ref1))
        with torch.autocast("cpu", dtype=torch.bfloat16):
            low1 = model.fc1(x)
            low2 = model.fc2(model.relu1(low1))
    errors = {layer.name: layer.error for layer in small.layers}
    assert errors["fc1"] == layer_error(ref1, low1)
    assert errors["relu1"] == layer_error(torch.relu(ref1), torch.relu(low1))
    assert errors["fc2"] == layer_error(ref2, low2)
    assert errors["fc1"].numel == 12 and not errors["fc1"].identical


def test_deeper_agreement_and_op_trace_in_the_result(small):
    a = small.agreement
    assert a.topk is not None and a.topk.k == 2
    assert len(a.flips) == a.rows - a.agree
    assert sum(b.rows for b in a.margin_bins) == 3
    trace = small.op_trace
    assert (trace.casts.count, trace.casts.bytes) == (5, 140)
    assert trace.casts_by_grad_mode["inference_mode"].by_op == {"aten.to.dtype": 5}


def test_new_json_fields_and_round_trip(small):
    data = json.loads(small.to_json())
    assert set(data["layers"][0]["error"]) >= {"max_abs", "mean_rel", "sqnr_db", "cosine"}
    assert set(data["agreement"]) >= {"topk", "flips", "flip_rate_by_margin", "rtol", "allclose"}
    assert data["agreement"]["topk"]["k"] == 2
    assert data["casts"]["count"] == 5 and data["casts"]["bytes"] == 140
    assert {r["mode"] for r in data["ops"]} == {"plain", "autocast"}
    assert [r["cast"] for r in data["ops"] if r["mode"] == "autocast"].count(True) == 5
    assert data["ops_diff"][-1] == {
        "op": "aten._to_copy.default",
        "plain": 0,
        "autocast": 5,
        "added": 5,
    }
    again = ExperimentResult.from_json(small.to_json())
    assert again == small
    assert again.extras == {}


def test_files_without_the_new_fields_still_load(small):
    data = small.to_dict()
    for layer in data["layers"]:
        del layer["error"]
    for key in ("topk", "flips", "flip_rate_by_margin"):
        del data["agreement"][key]
    for key in ("ops", "casts", "ops_diff", "casts_by_grad_mode"):
        del data[key]
    old = ExperimentResult.from_dict(data)
    assert all(layer.error is None for layer in old.layers)
    assert (old.agreement.topk, old.agreement.flips, old.op_trace) == (None, (), None)
    assert old.to_dict() == data


def test_malformed_new_fields_name_the_field(small):
    data = small.to_dict()
    data["layers"][1]["error"] = {"max_abs": "big"}
    with pytest.raises(ResultFormatError, match=r"layers\[1\]\.error"):
        ExperimentResult.from_dict(data)
    data = small.to_dict()
    data["agreement"]["flips"] = [{"row": 1}]
    with pytest.raises(ResultFormatError, match=r"agreement\.flips\[0\]"):
        ExperimentResult.from_dict(data)
    data = small.to_dict()
    data["casts"] = "many"
    with pytest.raises(ResultFormatError, match=r"result: casts: expected a JSON object"):
        ExperimentResult.from_dict(data)


def test_input_scale_changes_max_abs_but_not_sqnr():
    """Floating point: the relative error is scale-free, the absolute error is not."""
    base = ExperimentConfig(widths=(32, 16, 8), batch=16, **FAST)
    tiny = run_experiment(base.replace(input_scale=1e-3))
    huge = run_experiment(base.replace(input_scale=1e3))
    t, h = tiny.layers[-1].error, huge.layers[-1].error
    assert h.max_abs > 100 * t.max_abs
    assert abs(h.sqnr_db - t.sqnr_db) < 10
    assert 30 < t.sqnr_db < 70 and 30 < h.sqnr_db < 70  # bfloat16 keeps 8 significant bits
    assert (tiny.agreement.allclose, huge.agreement.allclose) == (True, False)  # atol 0.05


def test_float16_overflows_at_large_input_scale_bfloat16_does_not():
    base = ExperimentConfig(widths=(16, 8, 4), batch=8, input_scale=1e5, **FAST)
    half = run_experiment(base.replace(dtype="float16"))
    brain = run_experiment(base)
    assert half.layers[0].error.nonfinite > 0  # |x| > 65504 becomes inf in float16
    assert math.isnan(half.layers[0].error.sqnr_db)
    assert json.loads(half.to_json())["layers"][0]["error"]["sqnr_db"] is None
    assert all(layer.error.nonfinite == 0 for layer in brain.layers)
    assert math.isfinite(brain.layers[-1].error.sqnr_db)


def test_uniform_distribution_flows_through():
    config = ExperimentConfig(
        widths=(16, 8, 4), batch=8, input_distribution="uniform", input_scale=7.0, **FAST
    )
    result = run_experiment(config)
    model, x = build(config)
    assert float(x.min()) >= -7.0 and float(x.max()) <= 7.0
    assert float(x.abs().max()) > 3.5  # uniform on [-7, 7], not normal·7
    with torch.no_grad():
        ref = model.fc1(x)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            low = model.fc1(x)
    assert result.layers[0].error == layer_error(ref, low)
    assert result.config.input_distribution == "uniform"

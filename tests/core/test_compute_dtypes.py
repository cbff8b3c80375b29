"""What each layer computed in: the op trace's ops attributed to the layer that ran them.

The attribution is checked against the trace itself: the layers at the top of the model
partition the autocast forward's ops (every op is one layer's or the model's own), so their
counts must add up to the whole trace's. The dtypes asserted are those torch decides the same
way on every CPU kind (a GRU's matrix products under bfloat16 autocast, a MultiheadAttention's);
the LSTM, which raises on some CPUs, is asserted against what this run did.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
import torch

from autocast_explorer.core.experiment.capture import LayerDtypes
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment, with_compute_dtypes
from autocast_explorer.core.experiment.model import build
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.experiment.summary import compute_sentence, format_summary
from autocast_explorer.core.numerics.compute import (
    SHAPE_OPS,
    ComputeDtypes,
    compute_by_layer,
    packet,
)
from autocast_explorer.core.numerics.optrace import trace_model
from autocast_explorer.core.runtime.threads import torch_threads
from tests.edits import edited

FAST = {"min_time": 0.02, "threads": 1}
RNN = {"model": "rnn", "features": 8, "hidden": 16, "seq": 6, "depth": 1, "batch": 4, **FAST}


@pytest.fixture(scope="module")
def gru() -> ExperimentResult:
    return run_experiment(ExperimentConfig(cell="gru", **RNN))


@pytest.fixture(scope="module")
def encoder_unfused() -> ExperimentResult:
    cfg = ExperimentConfig(model="transformer", batch=2, fast_path=False, **FAST)
    return run_experiment(cfg)


def layer(result: ExperimentResult, name: str):
    return next(la for la in result.layers if la.name == name)


def trace_counts(result: ExperimentResult, module_prefix: str | None = None) -> Counter:
    """(op, dtype) → count straight from the op trace's records, maths ops only."""
    counts: Counter = Counter()
    for r in result.op_trace.autocast:
        if r.cast or packet(r.op) in SHAPE_OPS or not r.out_dtypes:
            continue
        if module_prefix is None or r.module.split(".")[0] == module_prefix:
            counts[(r.op, r.out_dtypes[0])] += 1
    return counts


def flat(compute: ComputeDtypes) -> Counter:
    return Counter({(op, d): n for op, dtypes in compute.ops.items() for d, n in dtypes.items()})


def test_the_gru_returns_float32_but_multiplies_in_bfloat16(gru):
    g = layer(gru, "gru").autocast
    assert g.out_dtype == "float32"  # what it returned …
    assert g.compute is not None
    addmm = g.compute.count("addmm", "bfloat16")
    assert addmm >= RNN["seq"]  # … and at least one bfloat16 matrix product per time step
    assert g.compute.count("addmm", "float32") == 0
    assert g.compute.mixed("float32")
    assert g.compute.dtypes[0] == "bfloat16"
    casts = sum(1 for r in gru.op_trace.autocast if r.cast and r.module == "gru")
    assert g.compute.casts == casts > 0
    assert compute_sentence(gru, layer(gru, "gru")) == (
        f"{addmm} addmm + {g.compute.by_dtype()['bfloat16'] - addmm} other ops in bfloat16 · "
        f"{g.compute.top_op('float32')[1]} {g.compute.top_op('float32')[0].split('.')[1]} + "
        f"{g.compute.by_dtype()['float32'] - g.compute.top_op('float32')[1]} other ops in "
        f"float32 · {casts} casts · output float32"
    )
    # Without autocast every op ran in float32 and nothing was cast.
    p = layer(gru, "gru").plain.compute
    assert p.dtypes == ("float32",) and p.casts == 0 and not p.mixed("float32")


def test_top_level_layers_partition_the_trace(gru, encoder_unfused):
    """Each op is one top-level layer's (its own or a nested layer's) or the model's own."""
    for result in (gru, encoder_unfused):
        summed = trace_counts(result, "")  # the model's own ops, outside every layer
        for la in result.layers:
            if "." not in la.name:
                assert flat(la.autocast.compute) == trace_counts(result, la.name), la.name
                summed += flat(la.autocast.compute)
        assert summed == trace_counts(result)


def test_a_layer_counts_the_ops_of_the_layers_inside_it(encoder_unfused):
    enc = layer(encoder_unfused, "encoder1").autocast
    attn = layer(encoder_unfused, "encoder1.self_attn")
    assert attn.kind == "MultiheadAttention"
    inner = Counter()
    for la in encoder_unfused.layers:
        if la.name.startswith("encoder1.") and la.name.count(".") == 1:
            inner += flat(la.autocast.compute)
    assert flat(enc.compute) >= inner  # the children's ops, plus the residual adds of its own
    # Attention's projections run in bfloat16, and the encoder layer returns float32 (its
    # residual add promotes), so its cell is mixed.
    assert attn.autocast.compute.by_dtype()["bfloat16"] > 0
    assert enc.out_dtype == "float32" and enc.compute.mixed("float32")
    assert enc.compute.casts == sum(
        1 for r in encoder_unfused.op_trace.autocast if r.cast and r.module.startswith("encoder1")
    )


def test_the_fused_encoder_layer_is_traced_as_it_runs_and_a_differing_layer_is_left_out():
    cfg = ExperimentConfig(model="transformer", batch=2, fast_path=True, **FAST)
    result = run_experiment(cfg)
    assert result.fast_path == {"plain": True, "autocast": True}
    # The tracer runs the fused kernel under autocast, as the untraced forward does (it
    # returned float32 traced before): its one op is seen, in bfloat16. (What each layer
    # returned while traced is the engine's to compare, not kept in the result: traced again.)
    with torch_threads(cfg.threads), torch.no_grad():  # as the engine traces
        traced = trace_model(*build(cfg), torch.bfloat16)
    assert traced.layer_outputs["autocast"]["encoder1"] == "bfloat16"
    enc = layer(result, "encoder1").autocast
    assert enc.out_dtype == "bfloat16"
    assert enc.compute.count("_transformer_encoder_layer_fwd", "bfloat16") == 1
    # A layer whose traced output differs from the untraced one gets no compute dtypes.
    outputs = {"autocast": {**traced.layer_outputs["autocast"], "encoder1": "float32"}}
    changed = traced.model_copy(update={"layer_outputs": outputs})
    untraced = [LayerDtypes.of(la.autocast.in_dtype, la.autocast.out_dtype) for la in result.layers]
    bare = [
        la.model_copy(update={"autocast": a}) for la, a in zip(result.layers, untraced, strict=True)
    ]
    layers = with_compute_dtypes(tuple(bare), changed)
    left_out = edited(result, layers=layers)
    assert [la.name for la in layers if la.autocast.compute is None] == ["encoder1"]
    assert (
        layer(left_out, "encoder2").autocast.compute == layer(result, "encoder2").autocast.compute
    )
    assert compute_sentence(left_out, layer(left_out, "encoder1")).startswith("not seen")


def test_the_lstm_shows_what_this_cpu_did():
    result = run_experiment(ExperimentConfig(cell="lstm", **RNN))
    lstm = layer(result, "lstm")
    if result.autocast_error:  # the bfloat16 kernel raised here: nothing was traced
        assert result.op_trace is None
        assert lstm.autocast is None or lstm.autocast.compute is None
        return
    compute = lstm.autocast.compute
    assert compute is not None
    assert flat(compute) == trace_counts(result, "lstm")
    assert compute.by_dtype()[lstm.autocast.out_dtype] > 0
    assert "computed in: " in format_summary(result)


def test_json_round_trip_and_old_files(gru):
    data = json.loads(gru.to_json())
    entry = next(la for la in data["layers"] if la["name"] == "gru")
    g = layer(gru, "gru").autocast.compute
    assert entry["autocast"]["compute_dtypes"] == g.to_dict()
    assert entry["autocast"]["casts"] == g.casts
    assert all("module" in op for op in data["ops"] if op["mode"] == "autocast" and op["cast"])
    back = ExperimentResult.from_json(gru.to_json())
    assert layer(back, "gru").autocast.compute == g
    for la in data["layers"]:  # a file written before the field
        for mode in ("plain", "autocast"):
            la[mode].pop("compute_dtypes", None)
            la[mode].pop("casts", None)
    old = ExperimentResult.from_dict(data)
    assert all(la.autocast.compute is None for la in old.layers)
    assert compute_sentence(old, layer(old, "gru")) == ""


def test_compute_by_layer_on_constructed_records():
    from autocast_explorer.core.numerics.optrace import OpRecord

    def rec(op, out, module, cast=False):
        return OpRecord(
            mode="autocast",
            op=op,
            in_dtypes=("float32",),
            out_dtypes=(out,),
            shape=(2,),
            cast=cast,
            module=module,
        )

    records = [
        rec("aten._to_copy.default", "bfloat16", "a.b", cast=True),
        rec("aten.addmm.default", "bfloat16", "a.b"),
        rec("aten.t.default", "bfloat16", "a.b"),  # a view: not maths
        rec("aten.add.Tensor", "float32", "a"),
        rec("aten.add.Tensor", "float32", ""),  # the model's own op: no layer's
    ]
    found = compute_by_layer(records)
    assert found["a.b"] == ComputeDtypes({"aten.addmm.default": {"bfloat16": 1}}, 1)
    assert found["a"] == ComputeDtypes(
        {"aten.addmm.default": {"bfloat16": 1}, "aten.add.Tensor": {"float32": 1}}, 1
    )
    assert set(found) == {"a", "a.b"}
    assert found["a"].summary("float32") == (
        "1 addmm in bfloat16 · 1 add in float32 · 1 cast · output float32"
    )
    assert found["a"].mixed("float32") and not found["a.b"].mixed("bfloat16")

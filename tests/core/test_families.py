"""Model families: measured dtypes per layer kind, FLOPs, guards, JSON, autocast failures.

Dtypes that torch decides the same way on every CPU kind (Conv2d, BatchNorm2d after it,
MultiheadAttention, the encoder layer's two paths, GRU) are asserted as measured facts; the
LSTM, whose bfloat16 kernel depends on the CPU, is asserted against the environment and a
direct call of torch in the test.
"""

from __future__ import annotations

import json

import pytest
import torch

from autocast_explorer.core.experiment import guards
from autocast_explorer.core.experiment.config import ConfigError, ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.families import FAMILIES, family
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.hardware.capabilities import native_support
from tests.autocast_failure import refusing_mlp

FAST = {"min_time": 0.02, "threads": 1}


def by_kind(result: ExperimentResult) -> dict[str, set[str]]:
    """Autocast output dtypes seen per module class."""
    kinds: dict[str, set[str]] = {}
    for layer in result.layers:
        assert layer.autocast is not None
        kinds.setdefault(layer.kind, set()).add(layer.autocast.out_dtype)
    return kinds


@pytest.fixture(scope="module")
def cnn_result() -> ExperimentResult:
    return run_experiment(
        ExperimentConfig(model="cnn", channels=(3, 8, 16), image=16, batch=4, **FAST)
    )


def test_cnn_layers_and_dtypes(cnn_result):
    r = cnn_result
    assert [la.name for la in r.layers] == [
        "conv1", "bn1", "relu1", "pool1", "conv2", "bn2", "relu2", "pool2",
        "gap", "flatten", "fc",
    ]  # fmt: skip
    kinds = by_kind(r)
    assert kinds["Conv2d"] == {"bfloat16"}
    assert kinds["BatchNorm2d"] == {"bfloat16"}  # it follows the bfloat16 convolution
    assert kinds["MaxPool2d"] == {"bfloat16"}
    assert kinds["Linear"] == {"bfloat16"}
    assert all(la.plain.out_dtype == "float32" for la in r.layers)
    assert r.output_dtype_autocast == "bfloat16"
    assert r.layers[0].out_shape == (4, 8, 16, 16)
    assert r.layers[3].out_shape == (4, 8, 8, 8)
    assert r.agreement is not None and r.agreement.rows == 4
    assert r.fast_path is None


def test_cnn_flops_count_the_convolutions_as_implicit_gemms(cnn_result):
    config = cnn_result.config
    expected = 2 * 4 * (16 * 16 * 3 * 9 * 8 + 8 * 8 * 8 * 9 * 16) + 2 * 4 * 16 * 10
    assert family(config).flops(config) == expected == cnn_result.flops


def test_cnn_casts_name_the_convolution_weights(cnn_result):
    trace = cnn_result.op_trace
    assert trace is not None
    assert trace.casts.by_kind["Conv2d.weight"] == 2
    assert trace.casts.by_kind["Linear.weight"] == 1
    # each cast names its parameter by its path in the model
    assert {k: trace.casts.by_source[k] for k in ("conv1.weight", "conv2.weight", "fc.weight")} == {
        "conv1.weight": 1,
        "conv2.weight": 1,
        "fc.weight": 1,
    }
    assert trace.casts.count == trace.casts.parameter_casts + 1  # and the input


def test_transformer_fast_path_returns_bfloat16_and_says_it_ran():
    r = run_experiment(
        ExperimentConfig(model="transformer", d_model=32, heads=4, seq=8, ff=64, batch=2, **FAST)
    )
    assert r.fast_path == {"plain": True, "autocast": True}
    kinds = by_kind(r)
    assert kinds["TransformerEncoderLayer"] == {"bfloat16"}
    # The fused kernel skips the layer's modules: none of them were called.
    assert "MultiheadAttention" not in kinds and "LayerNorm" not in kinds
    assert [la.name for la in r.layers] == ["encoder1", "encoder2", "pool", "fc"]


def test_transformer_without_fast_path_returns_float32_from_each_layer():
    r = run_experiment(
        ExperimentConfig(
            model="transformer", d_model=32, heads=4, seq=8, ff=64, batch=2, fast_path=False,
            **FAST,
        )
    )  # fmt: skip
    assert r.fast_path == {"plain": False, "autocast": False}
    kinds = by_kind(r)
    assert kinds["TransformerEncoderLayer"] == {"float32"}  # the residual add promotes
    assert kinds["MultiheadAttention"] == {"bfloat16"}
    assert kinds["LayerNorm"] == {"float32"}
    assert kinds["Linear"] == {"bfloat16"}
    names = [la.name for la in r.layers]
    assert names.index("encoder1") < names.index("encoder1.self_attn")  # outer layer first
    kinds = r.op_trace.casts.by_kind
    assert kinds["MultiheadAttention.in_proj_weight"] == 2  # one per encoder layer
    assert kinds["NonDynamicallyQuantizableLinear.weight"] == 2  # the out-projections
    sources = r.op_trace.casts.by_source
    assert sources["encoder1.self_attn.in_proj_weight"] == 1
    assert sources["encoder2.self_attn.out_proj.weight"] == 1
    data = json.loads(r.to_json())
    assert data["config"]["fast_path"] is False
    assert data["fast_path"] == {"plain": False, "autocast": False}


def test_gru_stays_float32_and_its_recurrent_weights_are_cast():
    r = run_experiment(ExperimentConfig(model="rnn", cell="gru", seq=4, depth=1, batch=2, **FAST))
    kinds = by_kind(r)
    assert kinds["GRU"] == {"float32"}
    assert kinds["Linear"] == {"bfloat16"}
    assert [la.name for la in r.layers] == ["gru", "last", "fc"]
    assert r.op_trace.casts.by_kind["GRU.weight_hh_l0"] == 1
    assert r.op_trace.casts.by_source["gru.weight_hh_l0"] == 1


def test_lstm_outcome_follows_this_cpu():
    """bfloat16 LSTM: returns bfloat16 where the CPU has native bfloat16 (this is what the
    AMX and avx512_bf16 machines do); elsewhere the engine reports exactly what torch does
    when called directly (on the AVX2 host: a oneDNN error, as a finding)."""
    config = ExperimentConfig(model="rnn", cell="lstm", seq=4, depth=1, batch=2, **FAST)
    r = run_experiment(config)
    lstm = torch.nn.LSTM(config.features, config.hidden, batch_first=True)
    try:
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
            direct = lstm(torch.randn(2, 4, config.features))[0].dtype
        direct_error = ""
    except RuntimeError as exc:
        direct, direct_error = None, str(exc)
    if native_support(r.environment.cpu_flags, "bfloat16").native:
        assert not r.autocast_error
        assert by_kind(r)["LSTM"] == {"bfloat16"}
    if direct_error:
        assert r.autocast_error and direct_error.split("\n")[0][:40] in r.autocast_error
        assert r.autocast is None and r.agreement is None
    else:
        assert not r.autocast_error
        assert by_kind(r)["LSTM"] == {str(direct).removeprefix("torch.")}
        assert r.op_trace.casts.by_source["lstm.weight_hh_l0"] == 1


@pytest.fixture
def failing_model(monkeypatch):
    """The MLP family builds Linear → RaisesUnderAutocast → Linear."""
    monkeypatch.setattr(FAMILIES["mlp"], "build_model", refusing_mlp)
    return ExperimentConfig(widths=(16, 8, 4), batch=4, **FAST)


def test_a_failing_autocast_forward_is_a_result(failing_model):
    r = run_experiment(failing_model)
    assert "could not create a primitive descriptor for the test layer" in r.autocast_error
    assert r.autocast_error.startswith("RuntimeError: ")
    assert r.autocast is None and r.agreement is None and r.op_trace is None
    assert r.plain.samples >= 1 and r.plain.median_ms > 0  # float32 was still measured
    assert r.speedup != r.speedup  # NaN: nothing to compare
    fc1, refuses, fc2 = r.layers
    assert fc1.autocast is not None and fc1.autocast.out_dtype == "bfloat16"  # ran before it
    assert refuses.autocast is None and fc2.autocast is None  # never reached
    assert refuses.plain.out_dtype == "float32"
    data = json.loads(r.to_json())
    assert data["autocast_error"] == r.autocast_error
    assert data["latency"]["autocast"] is None and data["agreement"] is None
    assert data["layers"][1]["autocast"] is None
    back = ExperimentResult.from_json(r.to_json())
    assert back.autocast_error == r.autocast_error
    assert back.autocast is None and back.layers[1].autocast is None
    assert back.layers[0].autocast == fc1.autocast


def test_the_cli_prints_a_failing_autocast_forward_as_a_finding(failing_model, capsys):
    from autocast_explorer.cli import main

    code = main(["run", "--widths", "16,8,4", "--batch", "4", "--min-time", "0.02"])
    out = capsys.readouterr().out
    assert code == 0
    assert "Finding: bfloat16 autocast could not run this model here" in out
    assert "could not create a primitive descriptor for the test layer" in out
    assert "refuses  RaisesUnderAutocast" in out and "did not run (the forward raised)" in out
    assert "Verdict: bfloat16 autocast raised an error on this model" in out


def test_training_stops_with_one_line_when_the_autocast_step_raises(failing_model, capsys):
    """Training needs both copies: a raising autocast step ends the run with a clear message
    (exit 2, one line, no traceback) before any step is taken, never a raw torch error."""
    from autocast_explorer.cli import main
    from autocast_explorer.core.experiment.capture import AutocastFailed

    steps: list[object] = []
    with pytest.raises(AutocastFailed) as caught:
        run_experiment(failing_model.replace(mode="train", steps=2), partial=steps.append)
    assert caught.value.field == "autocast" and steps == []
    assert "autocast training step raised" in caught.value.rule
    assert "could not create a primitive descriptor for the test layer" in caught.value.rule

    args = ["run", "--widths", "16,8,4", "--batch", "4", "--mode", "train", "--steps", "2"]
    code = main([*args, "--min-time", "0.02"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.startswith("error: autocast: the bfloat16 autocast training step raised")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_memory_guard_counts_each_family():
    for config in (
        ExperimentConfig(model="cnn", channels=(3, 64, 64), image=512, batch=64),
        ExperimentConfig(model="transformer", seq=4096, heads=4, batch=16),
        ExperimentConfig(model="rnn", seq=4096, hidden=1024, batch=64),
    ):
        quick = guards.estimate_peak_bytes(config)  # the window's, from the family's counts
        fam = family(config)
        assert quick > 6 * fam.activation_elements(config)  # float32 + bfloat16, both modes
        roomy = config.replace(memory_budget_mb=quick / 2**20 * 2)
        assert guards.check_memory_before_running(roomy) == quick
        # The run's, traced on fake tensors: what torch really holds (the transformer's fused
        # attention never makes the seq × seq scores the family's count assumes).
        peak = guards.traced_peak_bytes(config)
        assert peak > 4 * fam.input_elements(config)
        with pytest.raises(guards.GuardError, match="smaller model or batch"):
            guards.check_memory(config.replace(memory_budget_mb=peak / 2**20 / 2))
        assert guards.check_memory(config.replace(memory_budget_mb=peak / 2**20 * 2)) == peak


def test_transformer_attention_scores_grow_with_the_square_of_seq():
    base = ExperimentConfig(model="transformer", depth=1, seq=64)
    longer = base.replace(seq=128)
    fam = family(base)
    bmm = [g for g in fam.gemms(base) if g.op == "bmm"]
    assert sum(g.flops for g in bmm) * 4 == sum(g.flops for g in fam.gemms(longer) if g.op == "bmm")


@pytest.mark.parametrize(
    ("changes", "field", "text"),
    [
        (
            {"model": "resnet"},
            "model",
            "is not a built-in model (mlp, cnn, transformer, rnn) nor a spec",
        ),
        ({"model": "transformer", "d_model": 64, "heads": 5}, "heads", "not divisible"),
        ({"model": "cnn", "channels": (3,)}, "channels", "at least one stage"),
        ({"model": "cnn", "channels": (3, 8, 8, 8), "image": 4}, "image", "3 pooling stages"),
        ({"model": "rnn", "cell": "rnn_tanh"}, "cell", "must be one of lstm, gru"),
        ({"model": "rnn", "hidden": 0}, "hidden", "whole number"),
    ],
)
def test_bad_family_values_name_the_field(changes, field, text):
    with pytest.raises(ConfigError) as caught:
        ExperimentConfig(**changes)
    assert caught.value.field == field
    assert text in caught.value.rule


def test_json_writes_the_family_and_only_its_parameters():
    mlp = ExperimentConfig().to_dict()
    assert mlp["model"] == "mlp" and mlp["widths"] == [256, 256, 256, 10]
    assert not {"channels", "d_model", "cell", "seq"} & set(mlp)
    cnn = ExperimentConfig(model="cnn").to_dict()
    assert cnn["channels"] == [3, 32, 64] and "widths" not in cnn
    assert {"image", "classes"} <= set(cnn) and "d_model" not in cnn
    rnn = ExperimentConfig(model="rnn", cell="gru").to_dict()
    assert {k: rnn[k] for k in ("cell", "features", "hidden", "seq", "depth", "classes")} == {
        "cell": "gru", "features": 32, "hidden": 64, "seq": 32, "depth": 2, "classes": 10,
    }  # fmt: skip
    for config in (ExperimentConfig(model=m) for m in FAMILIES):
        assert ExperimentConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config


def test_an_mlp_result_written_before_families_still_loads():
    """A document as written before model families existed: no `model`, no casts by source."""
    r = run_experiment(ExperimentConfig(widths=(8, 4), batch=2, **FAST))
    data = json.loads(r.to_json())
    del data["config"]["model"]
    del data["casts"]["by_source"], data["casts"]["by_kind"]
    for mode in data["casts_by_grad_mode"].values():
        mode.pop("by_source", None)
        mode.pop("by_kind", None)
    old = ExperimentResult.from_dict(data)
    assert old.config.model == "mlp" and old.config.widths == (8, 4)
    assert old.autocast_error == "" and old.fast_path is None
    assert old.op_trace is not None and old.op_trace.casts.by_source == {}
    assert old.op_trace.casts.by_kind == {}
    assert [la.autocast.out_dtype for la in old.layers] == ["bfloat16"]


def test_a_sweep_over_a_model_whose_autocast_forward_raises_says_why(failing_model):
    from autocast_explorer.core.sweeps.runner import AutocastFailed, run_sweep

    with pytest.raises(AutocastFailed) as caught:
        run_sweep(failing_model, "batch", (1, 2), probe_onednn=False)
    assert caught.value.field == "autocast"
    assert caught.value.rule.startswith("batch 1: the bfloat16 autocast forward raised")
    assert "primitive descriptor for the test layer" in caught.value.rule

"""`keep_float32`: the layers a run keeps in float32, on every model kind, route and mode.

Inside a kept layer autocast is off: its ops compute in float32 while the layers around it
compute in bfloat16 (measured by the op trace, the training probe, the compiled graph, oneDNN's
verbose log). A pattern that names no layer is refused before anything is measured.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from autocast_explorer.core.experiment.config import ConfigError, ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.fallback import silent_fallbacks
from autocast_explorer.core.experiment.interventions import keeping, kept_copy
from autocast_explorer.core.experiment.layer_patterns import covering, parse_patterns
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.experiment.summary import format_summary
from autocast_explorer.core.reports.report import report_markdown, write_report
from autocast_explorer.core.sweeps.runner import run_sweep
from tests.core.test_report import reproduced
from tests.edits import edited

FAST = {"min_time": 0.02}
MLP = ExperimentConfig(widths=(24, 12, 8, 4), batch=6, keep_float32=("fc2",), **FAST)
TINY_BERT = {
    "num_hidden_layers": 1,
    "hidden_size": 32,
    "num_attention_heads": 2,
    "intermediate_size": 64,
    "vocab_size": 100,
}
#: A user's factory that hands out one shared module, with its example input.
FACTORY = """\
import torch

SHARED = torch.nn.Sequential(
    torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16), torch.nn.Linear(16, 4)
)


def build():
    return SHARED, torch.randn(1, 8)
"""


def computed(layer, mode: str = "autocast") -> set[str]:
    """The dtypes the layer's ops computed in (the op trace's, attributed to it)."""
    compute = getattr(layer, mode).compute
    assert compute is not None, layer.name
    return set(compute.dtypes)


def by_name(result: ExperimentResult) -> dict:
    return {layer.name: layer for layer in result.layers}


# ---- every model kind, eager ---------------------------------------------------------------
@pytest.fixture(scope="module")
def mlp_result() -> ExperimentResult:
    return run_experiment(MLP)


def test_a_kept_layer_computes_in_float32_and_the_others_in_bfloat16(mlp_result):
    layers = by_name(mlp_result)
    assert [la.kept_float32 for la in mlp_result.layers] == [False, False, True, False, False]
    assert computed(layers["fc2"]) == {"float32"}
    assert (layers["fc2"].autocast.in_dtype, layers["fc2"].autocast.out_dtype) == (
        "bfloat16",
        "float32",
    )
    assert computed(layers["fc1"]) == computed(layers["fc3"]) == {"bfloat16"}
    assert computed(layers["fc2"], "plain") == {"float32"}


def test_the_result_records_the_patterns_and_each_layers_flag(mlp_result):
    data = json.loads(mlp_result.to_json())
    assert data["config"]["keep_float32"] == ["fc2"]
    assert [la["kept_float32"] for la in data["layers"]] == [False, False, True, False, False]
    again = ExperimentResult.from_json(mlp_result.to_json())
    assert again.config.keep_float32 == ("fc2",) and again == mlp_result


def test_a_result_without_kept_layers_is_written_as_before():
    plain = run_experiment(MLP.replace(keep_float32=()))
    data = plain.to_dict()
    assert "keep_float32" not in data["config"]
    assert all("kept_float32" not in layer for layer in data["layers"])


def test_a_stored_result_without_the_keys_still_reads(mlp_result):
    data = mlp_result.to_dict()
    del data["config"]["keep_float32"]
    for layer in data["layers"]:
        del layer["kept_float32"]
    old = ExperimentResult.from_dict(data)
    assert old.config.keep_float32 == () and not any(la.kept_float32 for la in old.layers)


def test_no_silent_float32_finding_for_a_layer_the_user_kept(mlp_result):
    assert silent_fallbacks(mlp_result) == ()
    # The same measurement without the mark: fc2's float32 would be a finding.
    unmarked = edited(
        mlp_result,
        layers=tuple(la.model_copy(update={"kept_float32": False}) for la in mlp_result.layers),
    )
    assert [f.layer for f in silent_fallbacks(unmarked)] == ["fc2"]


def test_summary_and_report_say_what_was_kept(mlp_result):
    text = format_summary(mlp_result)
    assert text.splitlines()[0].endswith(" · kept in float32: fc2")
    assert "autocast bfloat16→float32 (kept in float32)" in text
    md = report_markdown(mlp_result)
    assert "| kept in float32 | `fc2` (autocast off inside, inputs float32) |" in md
    assert "| fc2 | Linear | 6×8 | float32 → float32 | bfloat16 → float32 (kept in float32) |" in md


@pytest.mark.parametrize(
    ("config", "kept", "lowered"),
    [
        (
            ExperimentConfig(model="cnn", channels=(3, 4, 4), image=8, batch=2, **FAST),
            ("Conv2d",),
            {"conv1": False, "conv2": False, "fc": True},
        ),
        (
            ExperimentConfig(
                model="transformer", d_model=8, heads=2, seq=3, depth=2, ff=8, batch=2, **FAST
            ),
            ("encoder2",),
            {"encoder1": True, "encoder2": False, "fc": True},
        ),
        (
            ExperimentConfig(
                model="transformer",
                d_model=8,
                heads=2,
                seq=3,
                depth=1,
                ff=8,
                batch=2,
                fast_path=False,
                **FAST,
            ),
            ("encoder1.linear*",),
            {"encoder1.linear1": False, "encoder1.linear2": False, "encoder1.self_attn": True},
        ),
        (
            ExperimentConfig(
                model="rnn", cell="gru", features=4, hidden=8, seq=3, depth=1, batch=2, **FAST
            ),
            ("GRU",),
            {"gru": False, "fc": True},
        ),
    ],
    ids=["cnn-class", "transformer-layer", "transformer-glob", "gru"],
)
def test_every_built_in_family_keeps_what_its_patterns_name(config, kept, lowered):
    result = run_experiment(config.replace(keep_float32=kept))
    layers = by_name(result)
    for name, low in lowered.items():
        assert layers[name].kept_float32 is not low, name
        if low:
            assert "bfloat16" in computed(layers[name]), name
        else:
            assert computed(layers[name]) == {"float32"}, name
    assert silent_fallbacks(result) == ()


def test_your_own_file_model_keeps_its_layer_and_stays_as_built(tmp_path, monkeypatch):
    (tmp_path / "shared_model.py").write_text(FACTORY)
    monkeypatch.syspath_prepend(str(tmp_path))
    for spec in (f"{tmp_path / 'shared_model.py'}:build", "shared_model:build"):
        result = run_experiment(ExperimentConfig(model=spec, batch=3, keep_float32=("2",), **FAST))
        layers = by_name(result)
        assert computed(layers["2"]) == {"float32"} and layers["2"].kept_float32
        assert computed(layers["0"]) == computed(layers["3"]) == {"bfloat16"}
    import shared_model

    # The factory's one module is given back as built: no forward of a kept layer stays.
    assert all("forward" not in m.__dict__ for m in shared_model.SHARED.modules())


def test_hf_bert_keeps_every_attention_block():
    config = ExperimentConfig(
        model="hf:bert",
        model_args=TINY_BERT,
        seq=8,
        batch=2,
        keep_float32=("encoder.layer.*.attention",),
        **FAST,
    )
    layers = by_name(run_experiment(config))
    query = layers["encoder.layer.0.attention.self.query"]
    assert query.kept_float32 and computed(query) == {"float32"}
    assert computed(layers["encoder.layer.0.attention.output.dense"]) == {"float32"}
    ffn = layers["encoder.layer.0.intermediate.dense"]
    assert not ffn.kept_float32 and computed(ffn) == {"bfloat16"}


# ---- refusals -------------------------------------------------------------------------------
def test_a_pattern_that_names_no_layer_is_refused_before_anything_is_measured():
    said: list[str] = []
    with pytest.raises(ConfigError) as refused:
        run_experiment(
            MLP.replace(keep_float32=("fc2", "fc9")), progress=lambda f, m: said.append(m)
        )
    assert refused.value.field == "keep_float32"
    assert refused.value.rule.startswith("'fc9' matches no layer; nearest: fc3, fc2, fc1")
    assert "first (cold) calls" not in said and said[-1] == "building model"


@pytest.mark.parametrize(
    "changes",
    [
        {"mode": "train", "steps": 2},
        {"data": "digits", "widths": (64, 8, 10), "epochs": 1},
    ],
    ids=["training", "real-data"],
)
def test_training_and_real_data_refuse_before_any_step(changes):
    said: list[str] = []
    config = MLP.replace(keep_float32=("nope",), **changes)
    with pytest.raises(ConfigError, match="keep_float32: 'nope' matches no layer"):
        run_experiment(config, progress=lambda f, m: said.append(m))
    assert not any("training" in m or "probing" in m for m in said)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (["fc1,fc2"], "without commas or spaces"),
        (["fc 1"], "without commas or spaces"),
        ([""], "non-empty"),
        ("fc1", "must be a list of layer patterns"),
        (["fc\x00"], "printable"),
    ],
)
def test_a_malformed_pattern_is_refused_by_the_config(value, words):
    with pytest.raises(ConfigError, match=words) as refused:
        ExperimentConfig(keep_float32=value)
    assert refused.value.field == "keep_float32"


def test_typed_patterns_and_which_rows_they_keep():
    assert parse_patterns(" fc1, LayerNorm  encoder.*,") == ("fc1", "LayerNorm", "encoder.*")
    kinds = {"encoder": "Block", "encoder.attn": "Attention", "fc": "Linear"}
    assert covering(("encoder",), "encoder.attn", kinds) == ("encoder",)
    assert covering(("Block", "Linear"), "encoder.attn", kinds) == ("Block",)
    assert covering(("enc*.attn",), "encoder", kinds) == ()


# ---- training ------------------------------------------------------------------------------
def test_training_keeps_the_layer_in_both_copies_forward():
    result = run_experiment(MLP.replace(mode="train", steps=2))
    traces = {t.name: t for t in result.train.layers}
    assert traces["fc2"].forward["autocast"] == ("bfloat16", "float32")
    assert traces["fc1"].forward["autocast"] == ("float32", "bfloat16")
    assert traces["fc3"].forward["autocast"] == ("float32", "bfloat16")
    assert traces["fc2"].backward["autocast"][0] == "float32"  # its output's gradient
    assert [la.kept_float32 for la in result.layers] == [False, False, True, False, False]
    assert result.config.keep_float32 == ("fc2",)


def test_training_your_own_model_keeps_its_layer(tmp_path):
    (tmp_path / "shared_model.py").write_text(FACTORY)
    config = ExperimentConfig(
        model=f"{tmp_path / 'shared_model.py'}:build",
        batch=4,
        mode="train",
        steps=2,
        keep_float32=("2",),
        **FAST,
    )
    result = run_experiment(config)
    traces = {t.name: t for t in result.train.layers}
    assert traces["2"].forward["autocast"] == ("bfloat16", "float32")
    assert traces["3"].forward["autocast"] == ("float32", "bfloat16")
    assert [la.name for la in result.layers if la.kept_float32] == ["2"]


def test_a_kept_copy_keeps_its_own_layers_and_leaves_the_model_as_built():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 2))
    twin = kept_copy(model, ("1",))
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        assert twin(torch.randn(2, 4)).dtype == torch.float32
        assert model(torch.randn(2, 4)).dtype == torch.bfloat16
    twin[1].weight.data.zero_()  # the copy's own weights, not the model's
    with torch.no_grad():
        assert torch.count_nonzero(twin(torch.randn(2, 4)) - twin[1].bias) == 0
    with keeping(model, ["Linear"]) as kept:
        assert kept == ("0", "1")
    assert "forward" not in model[0].__dict__


def test_real_data_answers_with_every_product_kept_do_not_flip():
    result = run_experiment(
        ExperimentConfig(
            widths=(64, 16, 10), data="digits", epochs=1, batch=8, keep_float32=("Linear",), **FAST
        )
    )
    accuracy = result.accuracy
    assert accuracy is not None and accuracy.flipped == ()
    assert accuracy.autocast == accuracy.plain


# ---- routes and sweeps ----------------------------------------------------------------------
def test_the_implicit_route_keeps_float32_maths_inside_kept_layers():
    """oneDNN's verbose log: a kept layer's GEMM never runs with bf16 maths."""
    wide = ExperimentConfig(widths=(64, 64, 64, 4), batch=32, routes=("eager", "implicit"), **FAST)
    free = run_experiment(wide).routes[1]
    kept = run_experiment(wide.replace(keep_float32=("fc2",))).routes[1]
    assert kept.finding.endswith(
        "; inside the layers kept in float32 (fc2) fp32_precision was ieee: their GEMMs kept "
        "float32 maths"
    )
    assert len(kept.kernels) == max(len(free.kernels) - 1, 0)


@pytest.mark.compile
def test_the_compiled_route_compiles_the_kept_layer_in_float32():
    config = ExperimentConfig(
        widths=(24, 12, 8, 4), batch=6, keep_float32=("fc2",), routes=("eager", "compiled"), **FAST
    )
    compiled = run_experiment(config).routes[1]
    if compiled.lower is None:  # compiled bf16 can fail on some CPUs: its finding says so
        assert "torch.compile of the bfloat16 forward failed here: " in compiled.finding
        return
    assert compiled.finding.endswith(
        "kept in float32: fc2; the compiled bfloat16 graph's matrix products ran 2× in "
        "bfloat16, 1× in float32"
    )
    assert compiled.output_dtype == {"plain": "float32", "lower": "bfloat16"}


@pytest.mark.compile
def test_a_user_models_kept_layer_is_compiled_in_float32(tmp_path):
    (tmp_path / "shared_model.py").write_text(FACTORY)
    config = ExperimentConfig(
        model=f"{tmp_path / 'shared_model.py'}:build",
        batch=3,
        keep_float32=("2",),
        routes=("eager", "compiled"),
        **FAST,
    )
    compiled = run_experiment(config).routes[1]
    if compiled.lower is None:
        assert "torch.compile of the bfloat16 forward failed here: " in compiled.finding
        return
    assert compiled.finding.endswith(
        "kept in float32: 2; the compiled bfloat16 graph's matrix products ran 2× in "
        "bfloat16, 1× in float32"
    )


def test_a_sweep_keeps_the_layer_at_every_point_and_refuses_before_the_first():
    config = ExperimentConfig(
        widths=(16, 8, 4), keep_float32=("fc1",), routes=("eager", "implicit"), **FAST
    )
    sweep = run_sweep(config, "batch", [2, 4], probe_onednn=False)
    assert sweep.config.keep_float32 == ("fc1",)
    assert [
        p.routes[0].finding.endswith(
            "(fc1) fp32_precision was ieee: their GEMMs kept float32 maths"
        )
        for p in sweep.points
    ] == [True, True]
    reached: list[object] = []
    with pytest.raises(ConfigError, match=r"keep_float32: batch 2: 'nope' matches no layer"):
        run_sweep(config.replace(keep_float32=("nope",)), "batch", [2, 4], on_point=reached.append)
    assert reached == []


# ---- reproduce.py ----------------------------------------------------------------------------
@pytest.mark.process
@pytest.mark.parametrize(
    "config",
    [
        MLP,
        ExperimentConfig(
            model="cnn", channels=(3, 4), image=4, batch=2, keep_float32=("Conv2d",), **FAST
        ),
        MLP.replace(mode="train", steps=2, batch=4),
    ],
    ids=["mlp", "cnn", "train"],
)
def test_reproduce_py_keeps_the_same_layers(config, tmp_path):
    result = run_experiment(config)
    write_report(result, tmp_path)
    doc = reproduced(tmp_path)
    assert all(doc["same"].values()), doc["same"]
    if result.train is None:
        kept = [la.name for la in result.layers if la.kept_float32]
        assert doc["found"]["kept_float32"] == kept
        found = {la["name"]: la for la in doc["found"]["layers"]}
        assert all(found[name]["autocast"]["out"] == "float32" for name in kept)
    else:
        assert doc["found"]["loss"]["autocast"] == pytest.approx(
            list(result.train.loss["autocast"]), rel=1e-5
        )
    text = subprocess.run(
        [sys.executable, str(tmp_path / "reproduce.py"), "--min-time", "0.01"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert f"kept in float32: {', '.join(config.keep_float32)}" in text.splitlines()[0]


@pytest.mark.process
def test_reproduce_py_of_a_user_model_keeps_its_layer(tmp_path: Path):
    (tmp_path / "shared_model.py").write_text(textwrap.dedent(FACTORY))
    config = ExperimentConfig(
        model=f"{tmp_path / 'shared_model.py'}:build", batch=3, keep_float32=("2",), **FAST
    )
    write_report(run_experiment(config), tmp_path / "report")
    doc = reproduced(tmp_path / "report")
    assert all(doc["same"].values()), doc["same"]
    assert doc["found"]["kept_float32"] == ["2"]

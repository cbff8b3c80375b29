"""The op trace: what a TorchDispatchMode sees of autocast's casts, counted exactly."""

import contextlib
import io
import itertools
import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils._pytree import tree_leaves

from autocast_explorer.cli import main
from autocast_explorer.core.experiment import families as registry
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.model import build
from autocast_explorer.core.numerics.optrace import (
    CastSummary,
    OpTrace,
    OpTracer,
    count_casts,
    trace_forward,
    trace_model,
)
from autocast_explorer.core.runtime.dtypes import dtype_name
from autocast_explorer.core.runtime.wrapping import wrapped_forwards

ROOT = Path(__file__).resolve().parents[2]


def expected_casts(widths, batch, itemsize):
    """Per autocast region each Linear's weight and bias is cast, plus fc1's float32 input
    (later Linears get the previous activation, already low precision)."""
    layers = len(widths) - 1
    elements = sum(a * b + b for a, b in itertools.pairwise(widths)) + batch * widths[0]
    return 2 * layers + 1, elements * itemsize, elements * 4


@pytest.mark.parametrize(
    ("widths", "batch", "dtype"),
    [((8, 4, 2), 3, "bfloat16"), ((8, 4, 2), 3, "float16"), ((256, 256, 256, 10), 128, "bfloat16")],
)
def test_cast_count_and_bytes_of_a_known_model(widths, batch, dtype):
    model, x = build(ExperimentConfig(widths=widths, batch=batch, dtype=dtype))
    trace = trace_model(model, x, getattr(torch, dtype))
    count, written, read = expected_casts(widths, batch, 2)
    assert (trace.casts.count, trace.casts.bytes, trace.casts.bytes_read) == (count, written, read)
    assert trace.casts.by_op == {"aten._to_copy.default": count}
    if widths == (8, 4, 2):
        assert (count, written) == (5, 140)  # (4+32+24+2+8) elements × 2 bytes
    else:
        assert (count, written) == (7, 333844)  # the tutorial's model


def test_no_grad_and_inference_mode_see_the_same_casts_under_different_names():
    model, x = build(ExperimentConfig(widths=(8, 4, 2), batch=3))
    trace = trace_model(model, x, torch.bfloat16)
    no_grad = trace.casts_by_grad_mode["no_grad"]
    inference = trace.casts_by_grad_mode["inference_mode"]
    assert (no_grad.count, no_grad.bytes) == (inference.count, inference.bytes) == (5, 140)
    assert no_grad.by_op == {"aten._to_copy.default": 5}
    assert inference.by_op == {"aten.to.dtype": 5}
    # What each mode does not see: composites are decomposed before the mode under no_grad,
    # arrive whole under inference_mode.
    seen_no_grad = {r.op for r in trace_forward(model, x, torch.bfloat16, "no_grad")}
    seen_inference = {r.op for r in trace_forward(model, x, torch.bfloat16, "inference_mode")}
    assert seen_no_grad == {"aten._to_copy.default", "aten.t.default", "aten.addmm.default",
                            "aten.relu.default"}  # fmt: skip
    assert seen_inference == {"aten.to.dtype", "aten.linear.default", "aten.relu.default"}


def test_records_show_the_dtypes_each_op_ran_in():
    model, x = build(ExperimentConfig(widths=(8, 4, 2), batch=3))
    trace = trace_model(model, x, torch.bfloat16)
    assert not any(r.cast for r in trace.plain)
    plain_mm = [r for r in trace.plain if r.op == "aten.addmm.default"]
    auto_mm = [r for r in trace.autocast if r.op == "aten.addmm.default"]
    assert [r.in_dtypes for r in plain_mm] == [("float32",) * 3] * 2
    assert [r.in_dtypes for r in auto_mm] == [("bfloat16",) * 3] * 2
    assert [r.shape for r in auto_mm] == [(3, 4), (3, 2)]
    first_cast = trace.autocast[0]
    assert (first_cast.op, first_cast.in_dtypes, first_cast.out_dtypes) == (
        "aten._to_copy.default",
        ("float32",),
        ("bfloat16",),
    )
    assert (first_cast.shape, first_cast.bytes, first_cast.bytes_read) == ((4,), 8, 16)
    assert [(c.op, c.plain, c.autocast) for c in trace.added] == [("aten._to_copy.default", 0, 5)]
    assert {c.op: c.added for c in trace.counts}["aten.addmm.default"] == 0


def test_weight_casts_are_cached_within_one_region_except_under_inference_mode():
    model, x = build(ExperimentConfig(widths=(8, 4, 2), batch=3))

    def twice(grad):
        def run():
            with grad(), torch.autocast("cpu", dtype=torch.bfloat16):
                model(x)
                model(x)

        return run

    # Weights require grad: the second forward reuses their casts; only its input is cast.
    assert count_casts(twice(torch.no_grad)).count == 5 + 1
    assert count_casts(twice(torch.inference_mode)).count == 5 + 5


def test_copy_into_another_dtype_is_a_cast_and_same_dtype_is_not():
    dst = torch.empty(4, dtype=torch.bfloat16)
    with OpTracer("x") as tracer:
        dst.copy_(torch.ones(4))
        dst.copy_(torch.ones(4, dtype=torch.bfloat16))
        torch.ones(4).to(torch.float32)
    assert [(r.op, r.cast) for r in tracer.records if r.op.startswith("aten.copy_")] == [
        ("aten.copy_.default", True),
        ("aten.copy_.default", False),
    ]
    assert tracer.casts() == CastSummary(
        count=1, bytes=8, bytes_read=16, by_op={"aten.copy_.default": 1}
    )


def test_json_round_trip_and_bad_grad_mode():
    model, x = build(ExperimentConfig(widths=(8, 4, 2), batch=3))
    trace = trace_model(model, x, torch.bfloat16)
    data = json.loads(json.dumps(trace.to_dict()))
    assert set(data["ops"][0]) >= {"mode", "op", "in", "out", "shape", "cast"}
    assert data["casts"] == {
        "count": 5,
        "bytes": 140,
        "bytes_read": 280,
        "by_op": {"aten._to_copy.default": 5},
        "by_source": {"fc1.weight": 1, "fc1.bias": 1, "fc2.weight": 1, "fc2.bias": 1},
        "by_kind": {"Linear.weight": 2, "Linear.bias": 2},
        "grad_mode": "no_grad",
    }
    casts = [op for op in data["ops"] if op["cast"] and "source" in op]
    assert sorted((op["source"], op["source_kind"]) for op in casts) == [
        ("fc1.bias", "Linear.bias"),
        ("fc1.weight", "Linear.weight"),
        ("fc2.bias", "Linear.bias"),
        ("fc2.weight", "Linear.weight"),
    ]
    assert OpTrace.from_dict(data) == trace
    with pytest.raises(ValueError, match="grad_mode must be one of"):
        trace_forward(model, x, None, "enable_grad")


@pytest.mark.process
def test_tracing_does_not_import_dynamo():
    """Entering a default TorchDispatchMode imports torch._dynamo (~1 s); OpTracer opts out."""
    import subprocess
    import sys

    code = (
        "import sys, torch\n"
        "from autocast_explorer.core.numerics.optrace import count_casts\n"
        "m = torch.nn.Linear(4, 2)\n"
        "with torch.no_grad(), torch.autocast('cpu', dtype=torch.bfloat16):\n"
        "    summary = count_casts(lambda: m(torch.randn(3, 4)))\n"
        "print(summary.count, 'torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["3", "False"]


class ResidualConv(torch.nn.Module):
    """LayerNorm → Conv1d → GELU, added back: under autocast it returns bfloat16."""

    def __init__(self, width):
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.conv = torch.nn.Conv1d(width, width, 3, padding=1)
        self.act = torch.nn.GELU()

    def forward(self, x):
        return x + self.act(self.conv(self.norm(x).transpose(1, 2))).transpose(1, 2)


class RecurrentAfterBfloat16(torch.nn.Module):
    """A recurrent layer that gets a bfloat16 input and float32 weights (it crashed the tracer)."""

    def __init__(self, cell):
        super().__init__()
        self.inp = torch.nn.Linear(20, 48)
        self.block = ResidualConv(48)
        self.rnn = cell(48, 48, batch_first=True)
        self.out = torch.nn.Linear(48, 5)

    def forward(self, x):
        return self.out(self.rnn(self.block(self.inp(x)))[0])


@contextlib.contextmanager
def onednn(enabled):
    """torch.backends.mkldnn.flags warns (TF32 on Intel GPUs); the switch alone does not."""
    before = torch._C._get_mkldnn_enabled()
    torch._C._set_mkldnn_enabled(enabled)
    try:
        yield
    finally:
        torch._C._set_mkldnn_enabled(before)


def untraced_outputs(model, x, dtype, grad_mode):
    """Layer name → the dtype it returned in a forward without the tracer."""
    outputs = {}

    def around(name, _module, run, *_call):
        output = run()
        outputs[name] = dtype_name(next(t for t in tree_leaves(output) if torch.is_tensor(t)).dtype)
        return output

    grad = {"no_grad": torch.no_grad, "inference_mode": torch.inference_mode}[grad_mode]
    with grad(), torch.autocast("cpu", dtype=dtype), wrapped_forwards(model, around):
        model(x)
    return outputs


def _products(records, modules) -> dict[str, int]:
    """'module op in,…→out' → how often, for the matrix products run in `modules`."""
    return dict(
        Counter(
            f"{r.module} {r.op} {','.join(r.in_dtypes)}→{r.out_dtypes[0]}"
            for r in records
            if r.module in modules and r.op in ("aten.mm.default", "aten.addmm.default")
        )
    )


def recurrent_facts(cell: str, onednn_on: bool) -> dict[str, Any]:
    """What tracing RecurrentAfterBfloat16 with `cell` (GRU, LSTM) finds, as JSON: a fresh
    process under other CPU switches reports it back."""
    torch.manual_seed(0)
    model = RecurrentAfterBfloat16(getattr(torch.nn, cell)).eval()
    x = torch.randn(2, 12, 20)
    with onednn(onednn_on):
        trace = trace_model(model, x, torch.bfloat16)
        inference = trace_forward(model, x, torch.bfloat16, "inference_mode")
        untraced = untraced_outputs(model, x, torch.bfloat16, "inference_mode")
    whole = f"aten.{cell.lower()}.input"
    (rnn,) = [r for r in inference if r.module == "rnn" and r.op == whole]
    return {
        "outputs": trace.layer_outputs["autocast"],
        "untraced": untraced,
        "products": _products(trace.autocast, ("inp", "rnn", "out")),
        "rnn_casts": {k: v for k, v in trace.casts.by_source.items() if k.startswith("rnn.")},
        "whole": [rnn.in_dtypes[0], rnn.in_dtypes[-1], rnn.out_dtypes[0]],
        "casts": [trace.casts.count, trace.casts_by_grad_mode["inference_mode"].count],
    }


BF16_MM, BF16_ADDMM = "aten.mm.default bfloat16,bfloat16→", "aten.addmm.default bfloat16,bfloat16,"


def check_recurrent(facts: dict[str, Any]) -> None:
    assert facts["outputs"] == facts["untraced"]
    assert facts["untraced"]["rnn"] == "bfloat16"
    # no_grad: every matrix product in bfloat16, none with a float32 operand: the Linears', and
    # the recurrent layer's input projection of all 12 steps then one hidden product per step.
    assert facts["products"] == {
        f"inp {BF16_ADDMM}bfloat16→bfloat16": 1,
        f"rnn {BF16_MM}bfloat16": 1,
        f"rnn {BF16_ADDMM}bfloat16→bfloat16": 12,
        f"out {BF16_MM}bfloat16": 1,
    }
    assert facts["rnn_casts"] == {
        "rnn.weight_ih_l0": 1, "rnn.bias_ih_l0": 1, "rnn.weight_hh_l0": 1, "rnn.bias_hh_l0": 1
    }  # fmt: skip
    # inference_mode: the layer arrives whole, a bfloat16 input and float32 weights in, and
    # returns bfloat16 as it does untraced (the casts inside it are not seen: 11 - 4).
    assert facts["whole"] == ["bfloat16", "float32", "bfloat16"]
    assert facts["casts"] == [11, 7]


# GRU has no oneDNN kernel: with oneDNN on or off it runs torch's own cell, whose matrix products
# raised under the tracer on every CPU. The LSTM with oneDNN off is forced onto that path too.
RECURRENT = [("GRU", True), ("GRU", False), ("LSTM", False)]


@pytest.mark.parametrize(("cell", "onednn_on"), RECURRENT)
def test_a_recurrent_layer_after_a_bfloat16_layer_is_traced_as_it_runs(cell, onednn_on):
    check_recurrent(recurrent_facts(cell, onednn_on))


ODD_MODEL = (
    "import torch\n"
    "from tests.core.test_optrace import RecurrentAfterBfloat16\n"
    "def build():\n"
    "    torch.manual_seed(0)\n"
    "    return RecurrentAfterBfloat16(torch.nn.GRU), torch.randn(2, 12, 20)\n"
)


def test_the_cli_runs_a_gru_after_a_bfloat16_layer(tmp_path, capsys):
    """The issue's command line: it raised from the tracer and exited 1."""
    source = tmp_path / "odd.py"
    source.write_text(ODD_MODEL)
    args = ["run", "--model", f"{source}:build", "--batch", "2", "--min-time", "0.02"]
    assert main([*args, "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    gru = {(op["op"], op["out"][0]) for op in data["ops"] if op.get("module") == "rnn"}
    assert ("aten.addmm.default", "bfloat16") in gru
    assert data["casts_by_grad_mode"]["inference_mode"]["count"] == 7
    check_cli_layers(data)


def check_cli_layers(data: dict[str, Any]) -> None:
    """The run's layer table: each layer's autocast output dtype and the dtype its maths ran
    in (the GRU returns bfloat16 after a bfloat16 layer; the Linear's addmm ran in bfloat16)."""
    layers = {layer["name"]: layer["autocast"] for layer in data["layers"]}
    assert {name: side["out"] for name, side in layers.items()} == {
        "inp": "bfloat16", "block.norm": "bfloat16",
        "block.conv": "bfloat16", "block.act": "bfloat16", "rnn": "bfloat16", "out": "bfloat16",
    }  # fmt: skip
    assert layers["inp"]["compute_dtypes"] == {"aten.addmm.default": {"bfloat16": 1}}
    assert layers["block.conv"]["compute_dtypes"] == {"aten.convolution.default": {"bfloat16": 1}}
    assert data["output_dtype"] == {"plain": "float32", "autocast": "bfloat16"}


TRANSFORMER = {"d_model": 32, "heads": 2, "seq": 8, "depth": 2, "ff": 64, "batch": 2}
RNN = {"features": 8, "hidden": 16, "seq": 6, "batch": 4}
#: Every built-in family, small: its settings, the op doing its heavy maths, the layer running it,
#: how often that op ran there, and the autocast casts seen under no_grad and inference_mode.
FAMILIES = {
    "mlp": ({"widths": (16, 32, 8), "batch": 3}, "aten.addmm.default", "fc1", 1, (5, 5)),
    "cnn": ({"channels": (3, 8, 16), "image": 16, "batch": 2},
            "aten.convolution.default", "conv1", 1, (7, 7)),
    "transformer": ({**TRANSFORMER, "fast_path": False},
                    "aten.addmm.default", "encoder1.self_attn", 1, (23, 23)),
    # The fused encoder kernel's products ran without autocast under the tracer: it returned
    # float32 (bfloat16 untraced) and fc cast its input, a third cast.
    "transformer-fused": (TRANSFORMER, "aten._transformer_encoder_layer_fwd.default",
                          "encoder1", 1, (2, 2)),
    # 2 layers: their input projections are mm; one addmm per step and layer, and a last one.
    "rnn-lstm": ({"cell": "lstm", **RNN}, "aten.addmm.default", "lstm", 13, (25, 3)),
    "rnn-gru": ({"cell": "gru", **RNN}, "aten.addmm.default", "gru", 13, (25, 3)),
}  # fmt: skip


def test_the_table_holds_every_registered_family():
    assert {name.split("-")[0] for name in FAMILIES} == set(registry.FAMILIES)


def family_facts(name: str, onednn_on: bool = False) -> dict[str, Any]:
    """What tracing family `name` of the table finds, as JSON (see recurrent_facts)."""
    settings, heavy, layer, _runs, _casts = FAMILIES[name]
    model, x = build(ExperimentConfig(model=name.split("-")[0], **settings))
    with onednn(onednn_on):
        trace = trace_model(model, x, torch.bfloat16)
        untraced = untraced_outputs(model, x, torch.bfloat16, "no_grad")

    def heavy_dtypes(records) -> dict[str, int]:
        ran = (r for r in records if r.op == heavy and r.module.startswith(layer))
        return dict(Counter(r.out_dtypes[0] for r in ran))

    return {
        "outputs": trace.layer_outputs["autocast"],
        "untraced": untraced,
        "autocast": heavy_dtypes(trace.autocast),
        "plain": heavy_dtypes(trace.plain),
        "casts": [trace.casts_by_grad_mode[mode].count for mode in ("no_grad", "inference_mode")],
    }


def check_family(name: str, facts: dict[str, Any]) -> None:
    *_, runs, casts = FAMILIES[name]
    assert facts["outputs"] == facts["untraced"]
    assert (facts["autocast"], facts["plain"]) == ({"bfloat16": runs}, {"float32": runs})
    assert tuple(facts["casts"]) == casts


@pytest.mark.parametrize("name", FAMILIES)
def test_every_family_is_traced_as_it_runs_under_autocast(name):
    # oneDNN off: the LSTM on torch's own cell on every CPU (oneDNN's bf16 LSTM is not).
    check_family(name, family_facts(name))


# ---- as an AVX2-only host runs it -------------------------------------------------------------
def avx2_switches() -> dict[str, str]:
    """The switches `make test-as-avx2` runs the suite under (the Makefile's AVX2_HOST)."""
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    line = next(line for line in text.splitlines() if line.startswith("AVX2_HOST :="))
    return dict(word.split("=", 1) for word in line.removeprefix("AVX2_HOST :=").split())


EVERY_CELL = [(cell, on) for cell in ("GRU", "LSTM") for on in (True, False)]
#: Where oneDNN has no bf16 path, the rnn family's LSTM with oneDNN on raises under autocast
#: (untraced too: the finding of docs/measurement.md), so it is traced with oneDNN off only.
ONEDNN_REFUSES = ("rnn-lstm", True)


def onednn_lstm_refusals() -> list[str]:
    """What the rnn family's LSTM raises with oneDNN on, traced and untraced ('' if it ran)."""
    model, x = build(ExperimentConfig(model="rnn", **FAMILIES["rnn-lstm"][0]))

    def raised(run: Callable[[], object]) -> str:
        try:
            with onednn(True):
                run()
        except RuntimeError as exc:
            return str(exc).split(". ")[0]
        return ""

    return [
        raised(lambda: trace_model(model, x, torch.bfloat16)),
        raised(lambda: untraced_outputs(model, x, torch.bfloat16, "no_grad")),
    ]


def facts_here(folder: str) -> dict[str, Any]:
    """Everything the AVX2 test checks, traced in this process (oneDNN as the program leaves
    it, and off), and the issue's command line run here; `folder` takes its model file."""
    source = Path(folder) / "odd.py"
    source.write_text(ODD_MODEL)
    document = Path(folder) / "r.json"
    args = ["run", "--model", f"{source}:build", "--batch", "2", "--min-time", "0.02"]
    with contextlib.redirect_stdout(io.StringIO()):
        code = main([*args, "--json", str(document)])
    return {
        "capability": torch.backends.cpu.get_cpu_capability(),
        "onednn_bf16": torch.ops.mkldnn._is_mkldnn_bf16_supported(),
        "families": {
            f"{name} {on}": family_facts(name, on)
            for name in FAMILIES
            for on in (True, False)
            if (name, on) != ONEDNN_REFUSES
        },
        "onednn_lstm": onednn_lstm_refusals(),
        "recurrent": {f"{c} {on}": recurrent_facts(c, on) for c, on in EVERY_CELL},
        "cli": [code, json.loads(document.read_text()) if code == 0 else None],
    }


@pytest.mark.process
@pytest.mark.slow
def test_the_tracer_as_an_avx2_only_host_runs_it(tmp_path):
    """The GRU crashed the tracer only where oneDNN has no bf16 path: every family and the
    GRU model traced under the Makefile's AVX2 switches, in a fresh process (they act at
    torch's start), and the issue's command line run there."""
    script = (
        "import json, sys\n"
        "from tests.core.test_optrace import facts_here\n"
        "print(json.dumps(facts_here(sys.argv[1])))\n"
    )
    env = {**os.environ, **avx2_switches(), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    facts = json.loads(done.stdout)
    assert (facts["capability"], facts["onednn_bf16"]) == ("AVX2", False)
    assert len(facts["families"]) == 2 * len(FAMILIES) - 1
    for key, found in facts["families"].items():  # oneDNN on or off: no bf16 path either way
        check_family(key.split()[0], found)
    refused = "could not create a primitive descriptor for the LSTM forward propagation primitive"
    assert facts["onednn_lstm"] == [refused, refused]  # the tracer raises where torch does
    for found in facts["recurrent"].values():  # the LSTM too: no oneDNN bf16 LSTM here
        check_recurrent(found)
    code, document = facts["cli"]
    assert code == 0
    assert document["environment"]["cpu_flags"] == ["avx2", "fma"]
    assert document["environment"]["native_bf16"] is False
    check_cli_layers(document)

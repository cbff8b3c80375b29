"""The op trace: what a TorchDispatchMode sees of autocast's casts, counted exactly."""

import contextlib
import itertools
import json
from collections import Counter

import pytest
import torch
from torch.utils._pytree import tree_leaves

from autocast_explorer.cli import main
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


# GRU has no oneDNN kernel: with oneDNN on or off it runs torch's own cell, whose matrix products
# raised under the tracer on every CPU. The LSTM with oneDNN off is forced onto that path too.
@pytest.mark.parametrize(
    ("cell", "onednn_on"), [(torch.nn.GRU, True), (torch.nn.GRU, False), (torch.nn.LSTM, False)]
)
def test_a_recurrent_layer_after_a_bfloat16_layer_is_traced_as_it_runs(cell, onednn_on):
    torch.manual_seed(0)
    model = RecurrentAfterBfloat16(cell).eval()
    x = torch.randn(2, 12, 20)
    whole = "aten.gru.input" if cell is torch.nn.GRU else "aten.lstm.input"
    with onednn(onednn_on):
        trace = trace_model(model, x, torch.bfloat16)
        inference = trace_forward(model, x, torch.bfloat16, "inference_mode")
        untraced = untraced_outputs(model, x, torch.bfloat16, "inference_mode")
    assert trace.layer_outputs["autocast"] == untraced
    assert untraced["rnn"] == "bfloat16"
    # no_grad: the input projection of all 12 steps, then one hidden product per step.
    products = Counter(
        (r.op, r.in_dtypes, r.out_dtypes) for r in trace.autocast if r.module == "rnn"
    )
    assert products[("aten.mm.default", ("bfloat16",) * 2, ("bfloat16",))] == 1
    assert products[("aten.addmm.default", ("bfloat16",) * 3, ("bfloat16",))] == 12
    assert not any(r.op in ("aten.mm.default", "aten.addmm.default") for r in trace.autocast
                   if r.module == "rnn" and "float32" in r.in_dtypes)  # fmt: skip
    assert {k: v for k, v in trace.casts.by_source.items() if k.startswith("rnn.")} == {
        "rnn.weight_ih_l0": 1, "rnn.bias_ih_l0": 1, "rnn.weight_hh_l0": 1, "rnn.bias_hh_l0": 1
    }  # fmt: skip
    # inference_mode: the layer arrives whole, a bfloat16 input and float32 weights in, and
    # returns bfloat16 as it does untraced (the casts inside it are not seen: 11 - 4).
    (rnn,) = [r for r in inference if r.module == "rnn" and r.op == whole]
    assert rnn.in_dtypes[0] == "bfloat16" and rnn.in_dtypes[-1] == "float32"
    assert rnn.out_dtypes[0] == "bfloat16"
    assert (trace.casts.count, trace.casts_by_grad_mode["inference_mode"].count) == (11, 7)


def test_the_cli_runs_a_gru_after_a_bfloat16_layer(tmp_path, capsys):
    """The issue's command line: it raised from the tracer and exited 1."""
    source = tmp_path / "odd.py"
    source.write_text(
        "import torch\n"
        "from tests.core.test_optrace import RecurrentAfterBfloat16\n"
        "def build():\n"
        "    torch.manual_seed(0)\n"
        "    return RecurrentAfterBfloat16(torch.nn.GRU), torch.randn(2, 12, 20)\n"
    )
    args = ["run", "--model", f"{source}:build", "--batch", "2", "--min-time", "0.02"]
    assert main([*args, "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    gru = {(op["op"], op["out"][0]) for op in data["ops"] if op.get("module") == "rnn"}
    assert ("aten.addmm.default", "bfloat16") in gru
    assert data["casts_by_grad_mode"]["inference_mode"]["count"] == 7


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


@pytest.mark.parametrize("name", FAMILIES)
def test_every_family_is_traced_as_it_runs_under_autocast(name):
    settings, heavy, layer, runs, casts = FAMILIES[name]
    model, x = build(ExperimentConfig(model=name.split("-")[0], **settings))
    with onednn(False):  # the LSTM on torch's own cell on every CPU (oneDNN's bf16 LSTM is not)
        trace = trace_model(model, x, torch.bfloat16)
        untraced = untraced_outputs(model, x, torch.bfloat16, "no_grad")
    assert trace.layer_outputs["autocast"] == untraced
    ran = Counter((r.op, r.out_dtypes[0]) for r in trace.autocast if r.module.startswith(layer))
    plain = Counter((r.op, r.out_dtypes[0]) for r in trace.plain if r.module.startswith(layer))
    assert ran[(heavy, "bfloat16")] == plain[(heavy, "float32")] == runs
    assert not ran[(heavy, "float32")]
    seen = tuple(trace.casts_by_grad_mode[mode].count for mode in ("no_grad", "inference_mode"))
    assert seen == casts

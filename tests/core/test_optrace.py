"""The op trace: what a TorchDispatchMode sees of autocast's casts, counted exactly."""

import itertools
import json

import pytest
import torch

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

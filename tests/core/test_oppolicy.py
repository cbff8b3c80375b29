"""The live op-policy probe: classification from observed dtypes, errors reported, notes."""

import json

import pytest
import torch

from autocast_explorer.core.experiment.config import ConfigError
from autocast_explorer.core.experiment.progress import Cancelled
from autocast_explorer.core.numerics.oppolicy import (
    PROBED_OPS,
    SCHEMA,
    CaseResult,
    OpSpec,
    ProbeFormatError,
    ProbeResult,
    classify,
    probe_ops,
)

ISSUE_OPS = {
    "linear", "matmul", "addmm", "bmm", "conv1d", "conv2d", "relu", "gelu", "softmax",
    "log_softmax", "layer_norm", "batch_norm", "mean", "sum", "exp", "cat", "mse_loss",
    "cross_entropy", "prod", "cdist",
}  # fmt: skip


@pytest.fixture(scope="module", params=["bfloat16", "float16"])
def probe(request):
    return probe_ops(request.param)


def test_every_op_the_issue_names_is_probed():
    assert {spec.name for spec in PROBED_OPS} >= ISSUE_OPS


def test_classification_on_the_installed_torch(probe):
    low = probe.dtype
    assert probe.op("linear").policy == "lower"
    assert probe.op("mse_loss").policy == "fp32"
    assert probe.op("relu").policy == "follows"
    assert probe.op("cat").policy == "promote"
    linear = probe.op("linear")
    assert [(c.case, c.out_dtype) for c in linear.cases] == [
        ("float32", low),
        ("low", low),
        ("low_first", low),
        ("float32_first", low),
    ]
    assert linear.case("float32").casts == 3  # x, weight and bias cast down
    cat = probe.op("cat")
    assert (cat.out("float32"), cat.out("low"), cat.out("low_first")) == ("float32", low, "float32")
    assert probe.op("mse_loss").case("low").casts == 2  # both inputs cast up
    assert [c.case for c in probe.op("relu").cases] == ["float32", "low"]


def test_observed_dtypes_match_torch_called_directly(probe):
    low = getattr(torch, probe.dtype)
    x = torch.randn(4, 8)
    with torch.no_grad(), torch.autocast("cpu", dtype=low):
        direct = {
            "softmax": (torch.softmax(x, 1).dtype, torch.softmax(x.to(low), 1).dtype),
            "mean": (x.mean().dtype, x.to(low).mean().dtype),
            "prod": (x.prod().dtype, x.to(low).prod().dtype),
        }
    for name, (f32, lo) in direct.items():
        op = probe.op(name)
        assert (op.out("float32"), op.out("low")) == (str(f32)[6:], str(lo)[6:])


def test_notes_say_where_cpu_contradicts_common_belief(probe):
    low = probe.dtype
    tutorial = {n.op: n for n in probe.notes if n.source.startswith("tutorial")}
    assert set(tutorial) == {"softmax", "mean"}
    for note in tutorial.values():
        # Measured: float32 in → float32 out, low in → low out.
        assert note.contradicts
        assert note.verdict.startswith(f"holds only for float32 inputs: given {low} input")
        assert note.measured.startswith(f"float32 in → float32; {low} in → {low}")
    cuda = {n.op: n for n in probe.notes if n.source.startswith("PyTorch AMP docs")}
    contradicted = {op for op, n in cuda.items() if n.contradicts}
    assert {"softmax", "log_softmax", "layer_norm", "sum"} <= contradicted
    assert cuda["mse_loss"].contradicts is False
    assert cuda["mse_loss"].verdict == "holds on this CPU too"
    assert not {"linear", "relu", "cat"} & set(cuda)


def test_an_op_that_errors_is_reported_not_raised():
    # special.zeta has no bfloat16 kernel on CPU (and no autocast rule).
    zeta = OpSpec(
        "special.zeta",
        lambda g: [torch.rand(4, generator=g) + 1.5, torch.rand(4, generator=g) + 1.0],
        torch.special.zeta,
    )
    probe = probe_ops("bfloat16", specs=[zeta, PROBED_OPS[0]])
    op = probe.op("special.zeta")
    assert op.policy == "error"
    assert "not implemented for 'BFloat16'" in op.error
    assert op.case("float32").out_dtype == "float32"
    assert op.case("low").out_dtype is None
    assert op.why.startswith("raises with low-precision inputs: ")
    assert probe.op("linear").policy == "lower"
    again = ProbeResult.from_json(probe.to_json())
    assert again.op("special.zeta").error == op.error


def test_classify_from_synthetic_cases():
    def case(name, ins, out, error=None):
        return CaseResult(name, tuple(ins), out, error)

    lo = "bfloat16"
    follows = [
        case("float32", ["float32"] * 2, "float32"),
        case("low", [lo] * 2, lo),
        case("low_first", [lo, "float32"], lo),
        case("float32_first", ["float32", lo], None, "RuntimeError: mixed dtype"),
    ]
    policy, why, error = classify(follows, lo)
    assert (policy, error) == ("follows", None)
    assert "mixed dtype" in why
    promote = [*follows[:2], case("low_first", [lo, "float32"], "float32")]
    assert classify(promote, lo)[0] == "promote"
    odd = [case("float32", ["float32"], "float16"), case("low", [lo], "float64")]
    policy, why, _ = classify(odd, lo)
    assert policy == "other" and "float32 inputs → float16" in why


def test_json_document(probe):
    data = json.loads(probe.to_json())
    assert data["schema"] == SCHEMA == "autocast-explorer/ops/1"
    assert data["dtype"] == probe.dtype
    assert data["environment"]["torch_version"] == torch.__version__
    relu = next(op for op in data["ops"] if op["name"] == "relu")
    assert relu["policy"] == "follows"
    assert relu["cases"]["low"] == {
        "in": [probe.dtype],
        "out": probe.dtype,
        "error": None,
        "casts": 0,
    }
    assert ProbeResult.from_dict(data) == probe


def test_bad_input_and_bad_documents():
    with pytest.raises(ConfigError, match="dtype: must be one of bfloat16, float16"):
        probe_ops("float64")
    with pytest.raises(ConfigError, match="threads"):
        probe_ops("bfloat16", threads=0)
    with pytest.raises(Cancelled):
        probe_ops("bfloat16", cancel=lambda: True)
    with pytest.raises(ProbeFormatError, match="schema"):
        ProbeResult.from_json('{"schema": "autocast-explorer/result/1"}')
    with pytest.raises(ProbeFormatError, match="not valid JSON"):
        ProbeResult.from_json("{")
    with pytest.raises(ProbeFormatError, match="probe: environment: missing"):
        ProbeResult.from_dict({"schema": SCHEMA, "dtype": "bfloat16"})

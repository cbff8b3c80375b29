"""The live op-policy probe: classification from observed dtypes, errors reported, notes."""

import ast
import json
from pathlib import Path

import pytest
import torch

from autocast_explorer.core.experiment.config import ConfigError
from autocast_explorer.core.numerics.documented import (
    COMPLEX_VALUED,
    DOCS_FP32,
    DOCS_LOWER,
    DOCS_PROMOTE,
    TEST_LIST_POLICIES,
    Documented,
    docs_real_valued,
    documented,
    installed_test_lists,
    parse_test_lists,
)
from autocast_explorer.core.numerics.opcatalog import CATEGORIES, PROBED_OPS, OpSpec
from autocast_explorer.core.numerics.opnotes import DOCUMENTED_PREFIX, TESTS_NOTE_SOURCE
from autocast_explorer.core.numerics.oppolicy import (
    case_dtypes,
    classify,
    grouped_ops,
    probe_ops,
    select_specs,
)
from autocast_explorer.core.numerics.opresult import (
    POLICY_ORDER,
    SCHEMA,
    CaseResult,
    ProbeFormatError,
    ProbeResult,
)
from autocast_explorer.core.runtime.progress import Cancelled

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
        return CaseResult(case=name, in_dtypes=tuple(ins), out_dtype=out, error=error)

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
        "computed": None,
        "error": None,
        "casts": 0,
        "kernels": ["relu"],
    }
    assert relu["category"] == "activations-norms"
    assert relu["documented"] == {
        "as": "relu",
        "policy": "unlisted",
        "docs": None,
        "tests": None,
        "lists": [],
    }
    mse = next(op for op in data["ops"] if op["name"] == "mse_loss")
    assert mse["documented"]["policy"] == "fp32"
    assert "docs: CPU Ops that can autocast to float32" in mse["documented"]["lists"]
    assert "tests: AutocastCPUTestLists.nn_fp32" in mse["documented"]["lists"]
    assert data["sources"]["tests"].startswith(f"torch {torch.__version__} AutocastCPUTestLists")
    assert "docs/source/amp.md" in data["sources"]["docs"]
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


# ---- coverage of PyTorch's published CPU policy, read from the installed torch ------------
def _torch_test_lists_from_the_wheel() -> dict[str, list[str]]:
    """AutocastCPUTestLists' op names, parsed here independently of the code under test."""
    path = Path(torch.__file__).parent / "testing" / "_internal" / "autocast_test_lists.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    cls = next(
        n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "AutocastCPUTestLists"
    )
    lists: dict[str, list[str]] = {}
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
            target = node.targets[0]
            if isinstance(target, ast.Attribute) and target.attr in TEST_LIST_POLICIES:
                lists[target.attr] = [e.elts[0].value for e in node.value.elts]
    return lists


def test_the_probe_covers_torchs_own_cpu_test_lists(probe):
    lists = _torch_test_lists_from_the_wheel()
    assert set(lists) == set(TEST_LIST_POLICIES)  # every list the policy table names exists
    installed = installed_test_lists()
    assert installed.problem == ""
    assert {k: installed.lists[k] for k in lists} == {k: tuple(v) for k, v in lists.items()}
    listed = {op for ops in lists.values() for op in ops}
    covered = {spec.listed_name for spec in PROBED_OPS} & listed
    assert len(listed) >= 40
    assert len(covered) / len(listed) >= 0.9, sorted(listed - covered)
    # Each covered op agrees with the list's expectation, or a note says why not.
    tests_notes = {n.op: n for n in probe.notes if n.source == TESTS_NOTE_SOURCE}
    for op in probe.ops:
        expected = next(
            (TEST_LIST_POLICIES[k] for k, ops in lists.items() if op.documented.name in ops), None
        )
        if expected is None:
            continue
        assert op.documented.tests == expected
        if op.policy != expected:  # e.g. an op without a kernel for this dtype on this CPU
            note = tests_notes[op.name]
            assert note.contradicts and note.verdict.strip()
            assert note.claim.startswith(op.documented.name)


def test_the_probe_covers_the_docs_cpu_lists(probe):
    real_valued = docs_real_valued()
    assert "polar" not in real_valued and "cdist" in real_valued
    assert len(real_valued) == len(DOCS_LOWER) + len(DOCS_FP32) - len(COMPLEX_VALUED)
    covered = {spec.listed_name for spec in PROBED_OPS} & set(real_valued)
    assert len(covered) / len(real_valued) >= 0.9, sorted(set(real_valued) - covered)
    assert {spec.listed_name for spec in PROBED_OPS} >= set(DOCS_PROMOTE)


def test_every_disagreement_with_the_documentation_is_explained(probe):
    notes = {n.op: n for n in probe.notes if n.source.startswith(DOCUMENTED_PREFIX)}
    disagreeing = probe.disagreements()
    assert {op.name for op in disagreeing} == {n for n, note in notes.items() if note.contradicts}
    for op in disagreeing:
        assert not op.documented.agrees_with(op.policy)
        assert notes[op.name].verdict  # a reason, built from what was observed
        assert notes[op.name].measured.endswith(f"(policy: {op.policy})")
    for op in probe.ops:
        if op.name not in notes:
            assert op.documented.agrees_with(op.policy)


def test_documented_policies_come_from_the_lists():
    assert documented("linear").policy == "lower"
    assert documented("mkldnn_rnn_layer").docs == "lower"
    assert documented("cross_entropy_loss").policy == "fp32"
    assert documented("eq").tests == "promote" and documented("eq").docs is None
    assert documented("softmax") == Documented(
        name="softmax", policy="unlisted", docs=None, tests=None, lists=()
    )
    assert Documented(name="x", policy="unlisted", docs=None, tests=None).agrees_with("follows")
    assert Documented(name="x", policy="unlisted", docs=None, tests=None).agrees_with("promote")
    assert not Documented(name="x", policy="fp32", docs="fp32", tests=None).agrees_with("follows")
    spec_names = {spec.name: spec.listed_name for spec in PROBED_OPS}
    assert spec_names["cross_entropy"] == "cross_entropy_loss"
    assert spec_names["lstm"] == "mkldnn_rnn_layer"


def test_comparisons_are_classified_by_the_dtype_their_kernel_received(probe):
    low = probe.dtype
    eq = probe.op("eq")
    assert [c.out_dtype for c in eq.cases] == ["bool"] * 4
    assert [c.computed for c in eq.cases] == ["float32", low, "float32", "float32"]
    assert eq.policy == "promote" and eq.category == "comparisons"
    assert all(c.kernels == ("eq",) for c in eq.cases)
    # torch called directly agrees: the comparison of mixed inputs promotes to float32.
    a, b = torch.randn(4), torch.randn(4).to(getattr(torch, low))
    assert torch.result_type(a, b) == torch.float32 and (a == b).dtype == torch.bool


def test_complex_and_integer_results_report_the_dtype_they_computed_in(probe):
    fft = probe.op("fft_fft")
    assert (fft.out("float32"), fft.out("low")) == ("complex64", "complex64")
    assert [c.computed for c in fft.cases] == ["float32", "float32"]
    assert fft.policy == "fp32"
    rank = probe.op("linalg_matrix_rank")
    assert rank.out("float32") == "int64"
    assert rank.case("low").computed == "float32" and rank.policy == "fp32"
    assert rank.case("low").cell_text() == "int64[float32]"


def test_the_lstm_runs_mkldnn_rnn_layer_or_reports_why_not(probe):
    """Hardware decides (a CPU without native bf16 raises in oneDNN): structure, not outcome."""
    lstm = probe.op("lstm")
    assert lstm.documented.name == "mkldnn_rnn_layer" and lstm.documented.policy == "lower"
    if lstm.policy == "error":
        assert lstm.error and lstm.disagrees
        assert any(n.op == "lstm" and lstm.error in n.verdict for n in probe.notes)
    else:
        assert lstm.policy == "lower"
        assert [c.out_dtype for c in lstm.cases] == [probe.dtype] * 4
        assert "mkldnn_rnn_layer" in lstm.case("float32").kernels


def test_inputs_are_built_for_each_op():
    specs = {spec.name: spec for spec in PROBED_OPS}
    g = torch.Generator().manual_seed(0)
    assert specs["avg_pool3d"].inputs(g)[0].dim() == 5
    spd = specs["linalg_cholesky"].inputs(g)[0]
    assert torch.linalg.eigvalsh(spd).min() > 1.0  # symmetric positive definite
    x, target = specs["nll_loss2d"].inputs(g)[0], None
    assert x.shape == (2, 4, 3, 3) and target is None
    values, indices = specs["max_unpool2d"].inputs(g)
    assert values.is_floating_point() and indices.dtype == torch.int64
    assert case_dtypes([values, indices], "low", torch.bfloat16) == [torch.bfloat16, torch.int64]
    assert torch.linalg.cond(specs["linalg_solve"].inputs(g)[0]) < 10


def test_select_specs_by_category_and_name():
    losses = select_specs(["losses"])
    assert losses and all(s.category == "losses" for s in losses)
    assert len(losses) == sum(s.category == "losses" for s in PROBED_OPS)
    assert select_specs(["Matmul & Conv"]) == select_specs(["matmul-conv"])
    both = select_specs(["comparisons"], ["linear"])
    assert [s.name for s in both] == ["linear", "eq", "ne", "lt", "le", "gt", "ge"]
    assert select_specs() == PROBED_OPS
    with pytest.raises(ConfigError, match="only: unknown category 'bogus'"):
        select_specs(["bogus"])
    with pytest.raises(ConfigError, match="op: unknown op 'conv'; did you mean conv1d"):
        select_specs(names=["conv"])
    assert set(CATEGORIES) == {s.category for s in PROBED_OPS}


def test_filter_and_grouping(probe):
    groups = grouped_ops(probe.ops)
    assert [g for g, _ops in groups] == list(CATEGORIES)
    assert sum(len(ops) for _g, ops in groups) == len(probe.ops) == len(PROBED_OPS)
    loss = grouped_ops(probe.ops, "loss")
    expected = [s.name for s in PROBED_OPS if "loss" in s.name or s.category == "losses"]
    assert [op.name for _g, ops in loss for op in ops] == expected
    assert grouped_ops(probe.ops, "pooling lower") == []  # no pooling op is cast down
    fp32_pools = [op.name for _g, ops in grouped_ops(probe.ops, "pool fp32") for op in ops]
    assert fp32_pools == [
        op.name
        for op in probe.ops
        if op.policy == "fp32" and ("pool" in op.name or op.category == "pooling-padding")
    ]
    assert len(fp32_pools) >= 15
    first = grouped_ops(probe.ops, disagreements_first=True)
    disagreeing = [op.name for op in probe.disagreements()]
    if disagreeing:
        assert first[0][0] == "disagreements"
        assert [op.name for op in first[0][1]] == disagreeing
    rest = [op.name for _g, ops in first[1 if disagreeing else 0 :] for op in ops]
    assert sorted(rest + disagreeing) == sorted(op.name for op in probe.ops)
    only = grouped_ops(probe.ops, "disagree")
    assert [op.name for _g, ops in only for op in ops] == disagreeing


def test_policy_counts_add_up(probe):
    counts = probe.policy_counts()
    assert sum(counts.values()) == len(probe.ops)
    assert list(counts) == [p for p in POLICY_ORDER if p in counts]
    assert counts == {p: len(names) for p, names in probe.by_policy().items()}


def test_probe_files_written_before_documented_policies_still_read(probe):
    data = json.loads(probe.to_json())
    data.pop("sources")
    for op in data["ops"]:
        for key in ("documented", "category", "disagrees"):
            op.pop(key)
        for case in op["cases"].values():
            case.pop("computed")
            case.pop("kernels")
    old = ProbeResult.from_dict(data)
    assert old.op("linear").documented is None and not old.op("linear").disagrees
    assert old.op("linear").category == "matmul-conv"  # known ops find their category
    assert old.disagreements() == [] and old.sources == {}
    assert old.op("eq").case("float32").cell_text() == "bool"
    assert [op.policy for op in old.ops] == [op.policy for op in probe.ops]


def test_parse_test_lists_reads_text_without_importing():
    source = (
        "class AutocastCPUTestLists:\n"
        "    def __init__(self, dev):\n"
        "        x = 1\n"
        "        self.torch_16 = [('conv1d', x), ('mm', x, {})]\n"
        "        self.nn_fp32 = [('mse_loss', x)]\n"
        "class Other:\n"
        "    def __init__(self):\n"
        "        self.torch_16 = [('ignored', 1)]\n"
    )
    assert parse_test_lists(source) == {"torch_16": ("conv1d", "mm"), "nn_fp32": ("mse_loss",)}


def test_progress_per_op_and_cancel_between_ops():
    specs = select_specs(["comparisons"])
    seen: list[tuple[float, str]] = []
    probe_ops("bfloat16", specs=specs, progress=lambda f, m: seen.append((f, m)))
    assert [m for _f, m in seen] == [f"probing {s.name}" for s in specs] + ["done"]
    assert [f for f, _m in seen] == sorted(f for f, _m in seen) and seen[-1][0] == 1.0
    calls: list[str] = []
    with pytest.raises(Cancelled):
        probe_ops(
            "bfloat16",
            specs=specs,
            progress=lambda f, m: calls.append(m),
            cancel=lambda: len(calls) >= 3,  # asked to stop while the third op runs
        )
    assert calls == [f"probing {s.name}" for s in specs[:3]]  # stopped before the fourth

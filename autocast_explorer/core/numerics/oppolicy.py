"""Live op-policy probe: what CPU autocast does to each common op, measured on the installed torch.

Each op runs under `torch.autocast("cpu", dtype)` (and no_grad) with float32 inputs, with
low-precision inputs, and, for ops that take several floating inputs, with mixed inputs (first
input low + the rest float32, and the reverse). The policy is derived from the output dtypes
observed, never looked up:

- `lower`:   float32 inputs give the autocast dtype (autocast casts them down and runs low).
- `fp32`:    low-precision inputs give float32 (autocast casts them up).
- `follows`: float32 → float32 and low → low (no autocast rule; the op keeps its input's dtype;
             with mixed inputs it keeps the first input's dtype).
- `promote`: like `follows` for equal dtypes, but mixed inputs give float32, the widest
             (ordinary type promotion).
- `error`:   the float32 or the low-precision case raised; the message is kept.
- `other`:   anything else (reported with the observed dtypes, never forced into a class).

`notes` compare the measurements with what people commonly believe: the CUDA float32 list
from the PyTorch AMP documentation, and the tutorial's claim that softmax and mean stay float32.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from autocast_explorer.core.documents.reader import (
    DocumentFormatError,
    JsonReader,
    clean_text,
    document_kind,
    load_document,
    optional_text,
)
from autocast_explorer.core.experiment.config import DTYPES, ConfigError, validate_threads
from autocast_explorer.core.experiment.engine import torch_threads
from autocast_explorer.core.experiment.model import TORCH_DTYPES, dtype_name
from autocast_explorer.core.experiment.progress import CancelFn, ProgressFn, Reporter
from autocast_explorer.core.hardware.cpu import Environment, environment
from autocast_explorer.core.numerics.optrace import OpTracer

SCHEMA = "autocast-explorer/ops/1"
#: Input cases in the order they are run; the mixed ones only for ops with ≥ 2 float inputs.
CASES: tuple[str, ...] = ("float32", "low", "low_first", "float32_first")
CASE_LABELS: dict[str, str] = {
    "float32": "float32 inputs",
    "low": "low-precision inputs",
    "low_first": "first input low, others float32",
    "float32_first": "first input float32, others low",
}

#: "CUDA Ops that can autocast to float32" from the PyTorch AMP docs (torch.amp, autocast op
#: reference). A claim about CUDA, used only to point out where CPU behaves differently.
CUDA_FLOAT32_LIST: frozenset[str] = frozenset(
    {
        "acos", "asin", "binary_cross_entropy_with_logits", "cosh", "cosine_embedding_loss",
        "cdist", "cosine_similarity", "cross_entropy", "cumprod", "cumsum", "dist", "erfinv",
        "exp", "expm1", "group_norm", "hinge_embedding_loss", "kl_div", "l1_loss", "layer_norm",
        "log", "log_softmax", "log10", "log1p", "log2", "margin_ranking_loss", "mse_loss",
        "multilabel_margin_loss", "multi_margin_loss", "nll_loss", "norm", "normalize", "pdist",
        "poisson_nll_loss", "pow", "prod", "reciprocal", "rsqrt", "sinh", "smooth_l1_loss",
        "soft_margin_loss", "softmax", "softmin", "softplus", "sum", "renorm", "tan",
        "triplet_margin_loss",
    }
)  # fmt: skip
CUDA_SOURCE = "PyTorch AMP docs: on CUDA this op is on autocast's float32 list"
#: The tutorial's words (shared/seed/autocast-on-cpu-tutorial.txt, "Some operations stay in
#: float32"): "Autocast keeps a short list of operations in float32 … Softmax and mean are on
#: that list."
TUTORIAL_FLOAT32: tuple[str, ...] = ("softmax", "mean")
TUTORIAL_SOURCE = "tutorial: 'Softmax and mean stay in float32 under CPU autocast'"


@dataclass(frozen=True)
class OpSpec:
    """How to call one op: float32 input tensors from a generator, and the call itself.

    Non-floating arguments (class targets, dims) are fixed inside `call`, so only the floating
    inputs change dtype from case to case.
    """

    name: str
    inputs: Callable[[torch.Generator], list[torch.Tensor]]
    call: Callable[..., torch.Tensor]


def _spec(
    name: str, shapes: Sequence[tuple[int, ...]], call: Callable[..., torch.Tensor]
) -> OpSpec:
    return OpSpec(name, lambda g: [torch.randn(*s, generator=g) for s in shapes], call)


_TARGET = torch.tensor([1, 0, 3, 2])


def _batch_norm_inputs(g: torch.Generator) -> list[torch.Tensor]:
    x, mean, w, b = (torch.randn(*s, generator=g) for s in ((4, 8), (8,), (8,), (8,)))
    var = torch.rand(8, generator=g) + 0.5
    return [x, mean, var, w, b]


#: The probed ops (at least the common ones the docs discuss), each with small fixed shapes.
PROBED_OPS: tuple[OpSpec, ...] = (
    _spec("linear", [(4, 8), (6, 8), (6,)], F.linear),
    _spec("matmul", [(4, 8), (8, 6)], torch.matmul),
    _spec("mm", [(4, 8), (8, 6)], torch.mm),
    _spec("addmm", [(4, 6), (4, 8), (8, 6)], torch.addmm),
    _spec("bmm", [(2, 4, 8), (2, 8, 6)], torch.bmm),
    _spec("baddbmm", [(2, 4, 6), (2, 4, 8), (2, 8, 6)], torch.baddbmm),
    _spec("conv1d", [(2, 3, 16), (4, 3, 3), (4,)], F.conv1d),
    _spec("conv2d", [(2, 3, 8, 8), (4, 3, 3, 3), (4,)], F.conv2d),
    _spec("relu", [(4, 8)], F.relu),
    _spec("gelu", [(4, 8)], F.gelu),
    _spec("sigmoid", [(4, 8)], torch.sigmoid),
    _spec("tanh", [(4, 8)], torch.tanh),
    _spec("softmax", [(4, 8)], lambda x: F.softmax(x, dim=-1)),
    _spec("log_softmax", [(4, 8)], lambda x: F.log_softmax(x, dim=-1)),
    _spec("layer_norm", [(4, 8), (8,), (8,)], lambda x, w, b: F.layer_norm(x, (8,), w, b)),
    _spec("group_norm", [(4, 8), (8,), (8,)], lambda x, w, b: F.group_norm(x, 2, w, b)),
    OpSpec(
        "batch_norm",
        _batch_norm_inputs,
        lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False),
    ),
    _spec("mean", [(4, 8)], torch.mean),
    _spec("sum", [(4, 8)], torch.sum),
    _spec("exp", [(4, 8)], torch.exp),
    _spec("log", [(4, 8)], lambda x: torch.log(x.abs() + 0.5)),
    _spec("pow", [(4, 8)], lambda x: torch.pow(x, 2)),
    _spec("cumsum", [(4, 8)], lambda x: torch.cumsum(x, dim=0)),
    _spec("norm", [(4, 8)], torch.norm),
    _spec("add", [(4, 8), (4, 8)], torch.add),
    _spec("mul", [(4, 8), (4, 8)], torch.mul),
    _spec("cat", [(4, 8), (4, 8)], lambda a, b: torch.cat([a, b])),
    _spec("mse_loss", [(4, 8), (4, 8)], F.mse_loss),
    _spec("cross_entropy", [(4, 8)], lambda x: F.cross_entropy(x, _TARGET)),
    _spec("nll_loss", [(4, 8)], lambda x: F.nll_loss(x, _TARGET)),
    _spec(
        "binary_cross_entropy_with_logits",
        [(4, 8), (4, 8)],
        lambda x, t: F.binary_cross_entropy_with_logits(x, t.sigmoid()),
    ),
    _spec("prod", [(4, 8)], torch.prod),
    _spec("cdist", [(4, 8), (5, 8)], torch.cdist),
)


@dataclass(frozen=True)
class CaseResult:
    """One input case of one op: input dtypes, the output dtype (or the error), casts seen."""

    case: str
    in_dtypes: tuple[str, ...]
    out_dtype: str | None
    error: str | None = None
    casts: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "in": list(self.in_dtypes),
            "out": self.out_dtype,
            "error": self.error,
            "casts": self.casts,
        }

    @classmethod
    def from_dict(cls, case: str, data: Any, path: str = "case") -> CaseResult:
        r = JsonReader(data, path)
        return cls(
            case=clean_text(case),
            in_dtypes=tuple(r.texts("in")),
            out_dtype=optional_text(r, "out"),
            error=optional_text(r, "error"),
            casts=r.whole("casts", minimum=0, default=0),
        )


@dataclass(frozen=True)
class OpPolicy:
    """The measured policy of one op, the cases it rests on, and a sentence saying why."""

    name: str
    policy: str
    cases: tuple[CaseResult, ...]
    why: str
    error: str | None = None

    def case(self, name: str) -> CaseResult | None:
        return next((c for c in self.cases if c.case == name), None)

    def out(self, name: str) -> str | None:
        case = self.case(name)
        return case.out_dtype if case else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "policy": self.policy,
            "why": self.why,
            "error": self.error,
            "cases": {c.case: c.to_dict() for c in self.cases},
        }

    @classmethod
    def from_dict(cls, data: Any, path: str = "op") -> OpPolicy:
        r = JsonReader(data, path)
        cases = r.obj("cases")
        return cls(
            name=r.text("name"),
            policy=r.text("policy"),
            why=r.text("why", default=""),
            error=optional_text(r, "error"),
            cases=tuple(CaseResult.from_dict(k, v, cases.where(k)) for k, v in cases.data.items()),
        )


@dataclass(frozen=True)
class Note:
    """A common belief about an op next to what was measured here, and whether it holds."""

    op: str
    source: str
    claim: str
    measured: str
    verdict: str
    contradicts: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "source": self.source,
            "claim": self.claim,
            "measured": self.measured,
            "verdict": self.verdict,
            "contradicts": self.contradicts,
        }

    @classmethod
    def from_dict(cls, data: Any, path: str = "note") -> Note:
        r = JsonReader(data, path)
        return cls(
            op=r.text("op"),
            source=r.text("source"),
            claim=r.text("claim"),
            measured=r.text("measured"),
            verdict=r.text("verdict"),
            contradicts=r.boolean("contradicts"),
        )


#: A document that is not a valid op-policy probe result (the one document error class).
ProbeFormatError = DocumentFormatError


@dataclass(frozen=True)
class ProbeResult:
    """The whole probe for one autocast dtype on this machine and torch."""

    dtype: str
    environment: Environment
    ops: tuple[OpPolicy, ...]
    notes: tuple[Note, ...]
    created: str = ""

    def op(self, name: str) -> OpPolicy:
        for op in self.ops:
            if op.name == name:
                return op
        raise KeyError(name)

    def by_policy(self) -> dict[str, list[str]]:
        """Policy → op names, in probe order (the summary line of the table)."""
        groups: dict[str, list[str]] = {}
        for op in self.ops:
            groups.setdefault(op.policy, []).append(op.name)
        return groups

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "created": self.created,
            "dtype": self.dtype,
            "environment": self.environment.to_dict(),
            "ops": [op.to_dict() for op in self.ops],
            "notes": [note.to_dict() for note in self.notes],
        }

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Any) -> ProbeResult:
        """Strict: DocumentFormatError naming `probe` and the first bad field."""
        with document_kind("probe"):
            r = JsonReader(data, "")
            schema = r.text("schema")
            if schema != SCHEMA:
                raise r.fail("schema", f"expected {SCHEMA!r}, got {schema!r}")
            dtype = r.text("dtype")
            if dtype not in DTYPES:
                raise r.fail("dtype", f"expected one of {', '.join(DTYPES)}")
            return cls(
                dtype=dtype,
                environment=Environment.from_dict(r.obj("environment").data),
                ops=tuple(OpPolicy.from_dict(op.data, op.path) for op in r.objects("ops")),
                notes=tuple(
                    Note.from_dict(n.data, n.path) for n in r.objects("notes", required=False)
                ),
                created=r.text("created", default=""),
            )

    @classmethod
    def from_json(cls, text: str | bytes) -> ProbeResult:
        with document_kind("probe"):
            return cls.from_dict(load_document(text))


def _first_float(value: Any) -> torch.Tensor | None:
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, tuple | list):
        return next((v for v in value if isinstance(v, torch.Tensor)), None)
    return None


def _error_text(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    first = lines[0] if lines else ""
    return f"{type(exc).__name__}: {first}"[:300]


def run_case(spec: OpSpec, case: str, low: torch.dtype, seed: int = 0) -> CaseResult:
    """Run `spec` under autocast(low) with the inputs of `case`; errors are caught and kept."""
    inputs = spec.inputs(torch.Generator().manual_seed(seed))
    dtypes = {
        "float32": [torch.float32] * len(inputs),
        "low": [low] * len(inputs),
        "low_first": [low] + [torch.float32] * (len(inputs) - 1),
        "float32_first": [torch.float32] + [low] * (len(inputs) - 1),
    }[case]
    tensors = [t.to(d) for t, d in zip(inputs, dtypes, strict=True)]
    in_dtypes = tuple(dtype_name(d) for d in dtypes)
    tracer = OpTracer(case)
    try:
        with torch.no_grad(), torch.autocast("cpu", dtype=low), tracer:
            out = _first_float(spec.call(*tensors))
    except Exception as exc:  # an op unsupported for a dtype must be reported, not crash
        return CaseResult(case, in_dtypes, None, _error_text(exc), tracer.casts().count)
    out_dtype = dtype_name(out.dtype) if out is not None else None
    return CaseResult(case, in_dtypes, out_dtype, None, tracer.casts().count)


def _casts(n: int) -> str:
    return f"{n} cast" if n == 1 else f"{n} casts"


def classify(cases: Sequence[CaseResult], low: str) -> tuple[str, str, str | None]:
    """(policy, why, error) from the observed cases; see the module docstring."""
    by = {c.case: c for c in cases}
    f32, lo = by["float32"], by["low"]
    for c in (f32, lo):
        if c.error is not None:
            return "error", f"raises with {CASE_LABELS[c.case]}: {c.error}", c.error
    mixed = [by[k] for k in ("low_first", "float32_first") if k in by]
    mixed_ok = [c for c in mixed if c.error is None]
    f_out, l_out = f32.out_dtype, lo.out_dtype
    if f_out == low and l_out == low:
        return (
            "lower",
            f"float32 inputs are cast to {low} ({_casts(f32.casts)}); the op runs in {low}",
            None,
        )
    if f_out == "float32" and l_out == "float32":
        return (
            "fp32",
            f"{low} inputs are cast to float32 ({_casts(lo.casts)}); the op runs in float32",
            None,
        )
    if f_out == "float32" and l_out == low:
        failed = [c for c in mixed if c.error is not None]
        caveat = "".join(f"; with {CASE_LABELS[c.case]} it raises: {c.error}" for c in failed)
        if mixed_ok and all(c.out_dtype == "float32" for c in mixed_ok):
            return (
                "promote",
                f"no autocast rule: equal dtypes are kept, mixed {low}/float32 inputs give "
                f"float32, the widest (type promotion){caveat}",
                None,
            )
        if all(c.out_dtype == c.in_dtypes[0] for c in mixed_ok):
            return (
                "follows",
                f"no autocast rule: float32 in → float32 out, {low} in → {low} out"
                + (", mixed inputs keep the first input's dtype" if mixed_ok else "")
                + caveat,
                None,
            )
    observed = ", ".join(f"{CASE_LABELS[c.case]} → {c.out_dtype or 'error'}" for c in cases)
    return "other", f"observed: {observed}", None


def probe_op(spec: OpSpec, low: torch.dtype) -> OpPolicy:
    """All input cases of one op, classified."""
    inputs = spec.inputs(torch.Generator().manual_seed(0))
    floating = sum(1 for t in inputs if t.is_floating_point())
    names = CASES if floating >= 2 else CASES[:2]
    cases = tuple(run_case(spec, case, low) for case in names)
    policy, why, error = classify(cases, dtype_name(low))
    return OpPolicy(name=spec.name, policy=policy, cases=cases, why=why, error=error)


def _measured_words(op: OpPolicy, low: str) -> str:
    parts = []
    for case, label in (("float32", "float32"), ("low", low)):
        c = op.case(case)
        if c is not None:
            parts.append(f"{label} in → {c.out_dtype or 'error'}")
    return f"{'; '.join(parts)} (policy: {op.policy})"


def _float32_verdict(op: OpPolicy, low: str) -> tuple[str, bool]:
    """Does 'this op stays in float32 under autocast' hold for the measured op?"""
    if op.policy == "error":
        return "could not be checked: the op raised an error", False
    if op.policy == "fp32":
        return "holds", False
    if op.out("float32") == "float32" and op.out("low") == low:
        return (
            f"holds only for float32 inputs: given {low} input it returns {low} "
            "(the op follows its input; autocast does not force it to float32)",
            True,
        )
    return f"does not hold: float32 inputs give {op.out('float32')}", True


def belief_notes(ops: Sequence[OpPolicy], low: str) -> tuple[Note, ...]:
    """Notes for every probed op about which a common belief exists, with verdicts."""
    notes = []
    for op in ops:
        if op.name in TUTORIAL_FLOAT32:
            verdict, contradicts = _float32_verdict(op, low)
            notes.append(
                Note(
                    op=op.name,
                    source=TUTORIAL_SOURCE,
                    claim=f"{op.name} stays in float32 under CPU autocast",
                    measured=_measured_words(op, low),
                    verdict=verdict,
                    contradicts=contradicts,
                )
            )
        if op.name in CUDA_FLOAT32_LIST:
            verdict, contradicts = _float32_verdict(op, low)
            notes.append(
                Note(
                    op=op.name,
                    source=CUDA_SOURCE,
                    claim=f"{op.name} runs in float32 under autocast (true on CUDA)",
                    measured=_measured_words(op, low),
                    verdict=verdict if contradicts else "holds on this CPU too",
                    contradicts=contradicts,
                )
            )
    return tuple(notes)


def probe_ops(
    dtype: str = "bfloat16",
    specs: Sequence[OpSpec] = PROBED_OPS,
    threads: int | None = None,
    progress: ProgressFn | None = None,
    cancel: CancelFn | None = None,
) -> ProbeResult:
    """Probe every op in `specs` under CPU autocast with `dtype`; cancel is checked per op."""
    if dtype not in DTYPES:
        raise ConfigError("dtype", f"must be one of {', '.join(DTYPES)} (got {dtype!r})")
    validate_threads(threads)
    reporter = Reporter(progress, cancel)
    low = TORCH_DTYPES[dtype]
    results = []
    with torch_threads(threads) as used:
        for index, spec in enumerate(specs):
            reporter.check()
            reporter.report(index / max(1, len(specs)), f"probing {spec.name}")
            results.append(probe_op(spec, low))
    reporter.report(1.0, "done")
    return ProbeResult(
        dtype=dtype,
        environment=environment(used),
        ops=tuple(results),
        notes=belief_notes(results, dtype),
        created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    )

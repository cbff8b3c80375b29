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
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar

import torch
from pydantic import BeforeValidator, Field, WithJsonSchema
from torch.utils._pytree import tree_leaves

from autocast_explorer.core.documents.field_types import (
    Flag,
    NullableText,
    Text,
    TextMap,
    Texts,
    Whole,
    refuse,
    schema_tag,
)
from autocast_explorer.core.documents.model import OpenPart, Part, build, dump, read, schema
from autocast_explorer.core.documents.reader import (
    DocumentFormatError,
    document_kind,
    load_document,
)
from autocast_explorer.core.hardware.cpu import Environment, EnvironmentPart, environment
from autocast_explorer.core.numerics.documented import (
    DOCS_ORIGIN,
    TEST_LISTS_CLASS,
    UNLISTED,
    UNLISTED_MEANING,
    Documented,
    TestLists,
    documented,
    installed_test_lists,
)
from autocast_explorer.core.numerics.opcatalog import (
    CATEGORIES,
    PROBED_OPS,
    OpSpec,
    category_slug,
)
from autocast_explorer.core.numerics.optrace import OpRecord, OpTracer
from autocast_explorer.core.runtime.autocast import TORCH_DTYPES
from autocast_explorer.core.runtime.dtypes import DTYPES, dtype_name
from autocast_explorer.core.runtime.errors import ConfigError, error_text
from autocast_explorer.core.runtime.progress import CancelFn, ProgressFn, Reporter
from autocast_explorer.core.runtime.threads import torch_threads, validate_threads

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


#: Policies in the order tables and counts list them.
POLICY_ORDER: tuple[str, ...] = ("lower", "fp32", "follows", "promote", "error", "other")
#: The group that "disagreements first" puts on top.
DISAGREEMENTS_GROUP = "disagreements"


# ---- the document, defined once: reading, writing and the published schema --------------------
def _one_of(allowed: tuple[str, ...]) -> tuple[Any, ...]:
    """Text that must be one of `allowed` (the message lists them), for
    `Annotated[str, *_one_of(…)]`."""

    def check(value: Any) -> Any:
        if not isinstance(value, str):
            raise refuse("expected text")
        if value not in allowed:
            raise refuse(f"expected one of {', '.join(allowed)}")
        return value

    return BeforeValidator(check), WithJsonSchema({"enum": list(allowed)})


class CasePart(Part):
    in_dtypes: Annotated[Texts, Field(description="the input dtypes")] = Field(alias="in")
    out: Annotated[NullableText, Field(description="null when the op raised")] = None
    computed: Annotated[
        NullableText,
        Field(
            description="the dtype the op computed in where its output does not say it (bool, "
            "int64, complex results); null otherwise"
        ),
    ] = None
    error: NullableText = None
    casts: Whole = 0
    kernels: Annotated[Texts, Field(description="the aten ops dispatched, casts left out")] = ()


class DocumentedPart(Part):
    """what PyTorch documents for the op (null or absent in files written before it was kept)"""

    as_: Annotated[Text, Field(description="the aten name PyTorch's lists use")] = Field(
        default="", alias="as"
    )
    policy: Text
    docs: Annotated[NullableText, Field(description="the AMP docs' CPU lists")] = None
    tests: Annotated[NullableText, Field(description="AutocastCPUTestLists")] = None
    lists: Annotated[Texts, Field(description="every list that holds the op")] = ()


class OpPart(Part):
    name: Text
    category: Annotated[NullableText, Field(description="the catalog's category slug")] = None
    policy: Text
    why: Text = ""
    error: NullableText = None
    documented: DocumentedPart | None = None
    disagrees: Annotated[
        Flag, Field(description="the measured policy contradicts the documented")
    ] = False
    cases: dict[str, CasePart]


class NotePart(Part):
    op: Text
    source: Text
    claim: Text
    measured: Text
    verdict: Text
    contradicts: Flag


class ProbePart(OpenPart):
    """The op-policy probe: which dtype autocast gave each op, beside what PyTorch documents."""

    schema_: Annotated[str, schema_tag(SCHEMA)] = Field(alias="schema")
    created: Text = ""
    dtype: Annotated[str, *_one_of(DTYPES)] = Field(description="the autocast dtype")
    environment: EnvironmentPart
    sources: Annotated[
        TextMap, Field(description="where the documented policies come from (docs, tests)")
    ] = Field(default_factory=dict)
    ops: tuple[OpPart, ...]
    notes: tuple[NotePart, ...] = Field(
        default=(),
        description="disagreements with PyTorch's documentation (source starts 'documented "
        "for CPU') and common beliefs, next to what was measured here",
    )


@dataclass(frozen=True)
class CaseResult:
    """One input case of one op: input dtypes, the output dtype (or the error), casts seen."""

    case: str
    in_dtypes: tuple[str, ...]
    out_dtype: str | None
    error: str | None = None
    casts: int = 0
    #: The floating dtype the op computed in, when its output does not say it (a comparison's
    #: bool, a rank's int64: the dtype its kernel received; a complex result: its real dtype).
    computed: str | None = None
    #: The aten ops dispatched (casts excluded), in order, each once.
    kernels: tuple[str, ...] = ()

    def cell_text(self) -> str:
        """How a table shows this case: the output dtype, `[computed]` where it differs."""
        if self.error is not None:
            return "error"
        out = self.out_dtype or "?"
        return f"{out}[{self.computed}]" if self.computed and self.computed != out else out

    @property
    def effective(self) -> str | None:
        """The dtype the op ran in: `computed` where the output's dtype does not tell."""
        return self.computed or self.out_dtype

    def to_dict(self) -> dict[str, Any]:
        return dump(self.to_part())

    def to_part(self) -> CasePart:
        return build(
            CasePart,
            in_dtypes=self.in_dtypes,
            out=self.out_dtype,
            computed=self.computed,
            error=self.error,
            casts=self.casts,
            kernels=self.kernels,
        )

    @classmethod
    def from_part(cls, case: str, part: CasePart) -> CaseResult:
        return cls(
            case=case,
            in_dtypes=part.in_dtypes,
            out_dtype=part.out,
            error=part.error,
            casts=part.casts,
            computed=part.computed,
            kernels=part.kernels,
        )


@dataclass(frozen=True)
class OpPolicy:
    """The measured policy of one op, the cases it rests on, and a sentence saying why."""

    name: str
    policy: str
    cases: tuple[CaseResult, ...]
    why: str
    error: str | None = None
    category: str = ""
    #: What PyTorch publishes for this op (None in probe files written before it was kept).
    documented: Documented | None = None

    def case(self, name: str) -> CaseResult | None:
        return next((c for c in self.cases if c.case == name), None)

    def out(self, name: str) -> str | None:
        case = self.case(name)
        return case.out_dtype if case else None

    @property
    def disagrees(self) -> bool:
        """Does this torch on this CPU contradict what PyTorch documents for the op?"""
        return self.documented is not None and not self.documented.agrees_with(self.policy)

    def to_dict(self) -> dict[str, Any]:
        return dump(self.to_part())

    def to_part(self) -> OpPart:
        documented = None if self.documented is None else self.documented
        return build(
            OpPart,
            name=self.name,
            category=self.category,
            policy=self.policy,
            why=self.why,
            error=self.error,
            documented=None if documented is None else _documented_part(documented),
            disagrees=self.disagrees,
            cases={c.case: c.to_part() for c in self.cases},
        )

    @classmethod
    def from_dict(cls, data: Any, path: str = "op") -> OpPolicy:
        return cls.from_part(read(OpPart, data, at=path))

    @classmethod
    def from_part(cls, part: OpPart) -> OpPolicy:
        d = part.documented
        return cls(
            name=part.name,
            policy=part.policy,
            why=part.why,
            error=part.error,
            cases=tuple(CaseResult.from_part(k, v) for k, v in part.cases.items()),
            category=part.category or category_of(part.name),
            documented=(
                None if d is None else Documented(d.as_, d.policy, d.docs, d.tests, d.lists)
            ),
        )


def category_of(name: str) -> str:
    """The catalog's category for an op name ('' for one the catalog does not hold)."""
    return next((spec.category for spec in PROBED_OPS if spec.name == name), "")


def _documented_part(d: Documented) -> DocumentedPart:
    return build(
        DocumentedPart, as_=d.name, policy=d.policy, docs=d.docs, tests=d.tests, lists=d.lists
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
        return dump(self.to_part())

    def to_part(self) -> NotePart:
        return build(NotePart, **{name: getattr(self, name) for name in NotePart.model_fields})

    @classmethod
    def from_dict(cls, data: Any, path: str = "note") -> Note:
        return cls(**read(NotePart, data, at=path).model_dump())


#: A document that is not a valid op-policy probe result (the one document error class).
ProbeFormatError = DocumentFormatError


@dataclass(frozen=True)
class ProbeResult:
    """The whole probe for one autocast dtype on this machine and torch."""

    #: The document kind: it leads refusals and names fallback files ("probe-….json").
    KIND: ClassVar[str] = "probe"

    dtype: str
    environment: Environment
    ops: tuple[OpPolicy, ...]
    notes: tuple[Note, ...]
    created: str = ""
    #: Where the documented policies came from: {"docs": …, "tests": …} (stated once).
    sources: dict[str, str] = field(default_factory=dict)

    def op(self, name: str) -> OpPolicy:
        for op in self.ops:
            if op.name == name:
                return op
        raise KeyError(name)

    def disagreements(self) -> list[OpPolicy]:
        """Ops whose measured policy contradicts what PyTorch documents, in probe order."""
        return [op for op in self.ops if op.disagrees]

    def policy_counts(self) -> dict[str, int]:
        """Policy → number of ops, in POLICY_ORDER (only policies that occur)."""
        counts = {policy: 0 for policy in POLICY_ORDER}
        for op in self.ops:
            counts[op.policy] = counts.get(op.policy, 0) + 1
        return {policy: n for policy, n in counts.items() if n}

    def by_category(self) -> dict[str, list[OpPolicy]]:
        """Category slug → ops, categories in CATEGORIES order (unknown ones last)."""
        order = {slug: i for i, slug in enumerate(CATEGORIES)}
        groups: dict[str, list[OpPolicy]] = {}
        for op in sorted(self.ops, key=lambda o: order.get(o.category, len(order))):
            groups.setdefault(op.category, []).append(op)
        return groups

    def by_policy(self) -> dict[str, list[str]]:
        """Policy → op names, in probe order (the summary line of the table)."""
        groups: dict[str, list[str]] = {}
        for op in self.ops:
            groups.setdefault(op.policy, []).append(op.name)
        return groups

    def to_dict(self) -> dict[str, Any]:
        return dump(self.to_part())

    def to_part(self) -> ProbePart:
        return build(
            ProbePart,
            schema_=SCHEMA,
            created=self.created,
            dtype=self.dtype,
            environment=self.environment.to_part(),
            sources=dict(self.sources),
            ops=tuple(op.to_part() for op in self.ops),
            notes=tuple(note.to_part() for note in self.notes),
        )

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Any) -> ProbeResult:
        """Strict: DocumentFormatError naming `probe` and the first bad field."""
        part = read(ProbePart, data, cls.KIND)
        return cls(
            dtype=part.dtype,
            environment=Environment.from_part(part.environment),
            ops=tuple(OpPolicy.from_part(op) for op in part.ops),
            notes=tuple(Note(**n.model_dump()) for n in part.notes),
            created=part.created,
            sources=dict(part.sources),
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> ProbeResult:
        with document_kind(cls.KIND):
            return cls.from_dict(load_document(text))


def probe_schema() -> dict[str, Any]:
    """The published schema of the probe document (tools/write_schemas.py writes it)."""
    return schema(
        ProbePart,
        SCHEMA,
        "Autocast Explorer op-policy probe",
        "Which dtype torch.autocast('cpu') gave each op on PyTorch's CPU autocast lists (and "
        "common unlisted ones), measured with float32, low-precision and mixed inputs, beside "
        "what PyTorch documents: written by `autocast-explorer ops --json` and the window's "
        "Ops tab.",
    )


_COMPLEX_REAL: dict[torch.dtype, str] = {
    torch.complex32: "float16",
    torch.complex64: "float32",
    torch.complex128: "float64",
}
_FLOATING = ("float16", "bfloat16", "float32", "float64")
#: Kernels kept per case (the first ones dispatched): enough to say which op was reached.
MAX_KERNELS = 12


def _result_tensor(value: Any) -> torch.Tensor | None:
    """The op's main result: its first floating or complex tensor, else its first tensor."""
    tensors = [v for v in tree_leaves(value) if isinstance(v, torch.Tensor)]
    for t in tensors:
        if t.is_floating_point() or t.is_complex():
            return t
    return tensors[0] if tensors else None


def _widest(names: Sequence[str]) -> str:
    dtype = getattr(torch, names[0])
    for name in names[1:]:
        dtype = torch.promote_types(dtype, getattr(torch, name))
    return dtype_name(dtype)


def computed_dtype(out: torch.Tensor, records: Sequence[OpRecord]) -> str | None:
    """The dtype the op computed in when its output's dtype does not say (else None).

    A complex result computed in its real counterpart (complex64: float32). A bool or integer
    result (comparisons, matrix rank) computed in the dtype its first floating kernel received
    (casts aside): the widest floating input of that kernel, as TensorIterator promotes them.
    """
    if out.is_floating_point():
        return None
    if out.is_complex():
        return _COMPLEX_REAL.get(out.dtype)
    for record in records:
        floats = [d for d in record.in_dtypes if d in _FLOATING]
        if not record.cast and floats:
            return _widest(floats)
    return None


def _kernel_names(records: Sequence[OpRecord]) -> tuple[str, ...]:
    """'aten.addmm.default' → 'addmm', casts left out, each once, in dispatch order."""
    names = dict.fromkeys(
        r.op.removeprefix("aten.").rsplit(".", 1)[0] for r in records if not r.cast
    )
    return tuple(names)[:MAX_KERNELS]


def case_dtypes(inputs: Sequence[torch.Tensor], case: str, low: torch.dtype) -> list[torch.dtype]:
    """The dtype of each input in `case`: floating inputs per the case, the rest unchanged."""
    dtypes = [t.dtype for t in inputs]
    floating = [i for i, t in enumerate(inputs) if t.is_floating_point()]
    for rank, i in enumerate(floating):
        first = rank == 0
        dtypes[i] = {
            "float32": torch.float32,
            "low": low,
            "low_first": low if first else torch.float32,
            "float32_first": torch.float32 if first else low,
        }[case]
    return dtypes


def run_case(spec: OpSpec, case: str, low: torch.dtype, seed: int = 0) -> CaseResult:
    """Run `spec` under autocast(low) with the inputs of `case`; errors are caught and kept."""
    inputs = spec.inputs(torch.Generator().manual_seed(seed))
    dtypes = case_dtypes(inputs, case, low)
    tensors = [t.to(d) for t, d in zip(inputs, dtypes, strict=True)]
    in_dtypes = tuple(dtype_name(d) for d in dtypes)
    tracer = OpTracer(case)
    try:
        # Deprecated ops on the lists (torch.cholesky, torch.lu_solve…) warn; the probe calls
        # them on purpose, so their warnings are noise here.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.no_grad(), torch.autocast("cpu", dtype=low), tracer:
                out = _result_tensor(spec.call(*tensors))
    except Exception as exc:  # an op unsupported for a dtype must be reported, not crash
        return CaseResult(
            case,
            in_dtypes,
            None,
            error_text(exc),
            tracer.casts().count,
            kernels=_kernel_names(tracer.records),
        )
    return CaseResult(
        case,
        in_dtypes,
        dtype_name(out.dtype) if out is not None else None,
        None,
        tracer.casts().count,
        computed=None if out is None else computed_dtype(out, tracer.records),
        kernels=_kernel_names(tracer.records),
    )


def _casts(n: int) -> str:
    return f"{n} cast" if n == 1 else f"{n} casts"


def _first_floating(dtypes: Sequence[str]) -> str | None:
    return next((d for d in dtypes if d in _FLOATING), None)


def classify(cases: Sequence[CaseResult], low: str) -> tuple[str, str, str | None]:
    """(policy, why, error) from the observed cases; see the module docstring."""
    by = {c.case: c for c in cases}
    f32, lo = by["float32"], by["low"]
    for c in (f32, lo):
        if c.error is not None:
            return "error", f"raises with {CASE_LABELS[c.case]}: {c.error}", c.error
    mixed = [by[k] for k in ("low_first", "float32_first") if k in by]
    mixed_ok = [c for c in mixed if c.error is None]
    f_out, l_out = f32.effective, lo.effective
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
        if mixed_ok and all(c.effective == "float32" for c in mixed_ok):
            return (
                "promote",
                f"no autocast rule: equal dtypes are kept, mixed {low}/float32 inputs give "
                f"float32, the widest (type promotion){caveat}",
                None,
            )
        if all(c.effective == _first_floating(c.in_dtypes) for c in mixed_ok):
            return (
                "follows",
                f"no autocast rule: float32 in → float32 out, {low} in → {low} out"
                + (", mixed inputs keep the first input's dtype" if mixed_ok else "")
                + caveat,
                None,
            )
    observed = ", ".join(f"{CASE_LABELS[c.case]} → {c.effective or 'error'}" for c in cases)
    return "other", f"observed: {observed}", None


def probe_op(spec: OpSpec, low: torch.dtype, tests: TestLists | None = None) -> OpPolicy:
    """All input cases of one op, classified, with what PyTorch documents for it."""
    inputs = spec.inputs(torch.Generator().manual_seed(0))
    floating = sum(1 for t in inputs if t.is_floating_point())
    names = CASES if floating >= 2 else CASES[:2]
    cases = tuple(run_case(spec, case, low) for case in names)
    policy, why, error = classify(cases, dtype_name(low))
    return OpPolicy(
        name=spec.name,
        policy=policy,
        cases=cases,
        why=why,
        error=error,
        category=spec.category,
        documented=documented(spec.listed_name, tests),
    )


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


#: Notes about what PyTorch documents start with this (the belief notes do not).
DOCUMENTED_PREFIX = "documented for CPU"
DOCS_NOTE_SOURCE = f"{DOCUMENTED_PREFIX}: the AMP docs' CPU lists"
TESTS_NOTE_SOURCE = f"{DOCUMENTED_PREFIX}: torch's own {TEST_LISTS_CLASS}"
#: The documented policies in words (the claim of a disagreement note).
DOCUMENTED_WORDS: dict[str, str] = {
    "lower": "autocasts to the low-precision dtype",
    "fp32": "autocasts to float32",
    "promote": "runs in the widest input type",
    UNLISTED: UNLISTED_MEANING,
}
#: Words in an error message that say the CPU lacks a kernel, and what that means.
_NO_KERNEL_HINTS = ("primitive descriptor", "not implemented for", "not supported")


def _reached(op: OpPolicy, kernel: str) -> bool:
    return any(kernel in c.kernels for c in op.cases)


def _other_explanation(op: OpPolicy, low: str) -> str:
    """Words for an op no policy fits, naming the pattern when it is the common one."""
    f32, lo = op.case("float32"), op.case("low")
    mixed = [c for c in (op.case("low_first"), op.case("float32_first")) if c is not None]
    equal_kept = (
        f32 is not None
        and lo is not None
        and (f32.effective, lo.effective)
        == (
            "float32",
            low,
        )
    )
    rest = {"low_first": "float32", "float32_first": low}
    if equal_kept and mixed and all(c.effective == rest[c.case] for c in mixed):
        return (
            "equal input dtypes are kept (as the docs say of unlisted ops), but with mixed "
            "inputs the result takes the dtype of the inputs after the first (for a recurrent "
            f"layer: its weights and state), neither the first input's nor the widest: {op.why}"
        )
    return f"none of the policies fits what it returned: {op.why}"


def disagreement_explanation(op: OpPolicy, low: str) -> str:
    """Why the measured policy differs from the documented one, from what was observed."""
    doc = op.documented
    assert doc is not None
    listed = doc.name
    if op.policy == "error":
        hint = ""
        if op.error and any(h in op.error for h in _NO_KERNEL_HINTS):
            hint = f" (no {low} kernel for it on this CPU with this torch)"
        return f"it raises here{hint}, so the documented policy cannot run: {op.error}"
    if op.policy == "other":
        return _other_explanation(op, low)
    if doc.policy in ("lower", "fp32") and op.policy in ("follows", "promote"):
        if _reached(op, listed):
            return (
                f"aten.{listed} was dispatched but autocast did not cast its inputs; "
                f"measured: {op.why}"
            )
        seen = ", ".join(op.cases[0].kernels[:4]) or "nothing"
        return (
            f"this call never reaches the listed aten.{listed} under autocast (it dispatched "
            f"{seen}), so autocast has nothing to cast; measured: {op.why}"
        )
    if doc.policy == UNLISTED:
        listed_kernels = [
            k
            for k in op.cases[0].kernels
            if documented(k).policy in ("lower", "fp32") and k != listed
        ]
        if listed_kernels:
            return (
                f"not listed itself, but it is built from aten.{listed_kernels[0]}, which is, "
                f"so autocast casts there; measured: {op.why}"
            )
        return f"not listed, yet autocast changed its dtype; measured: {op.why}"
    return f"measured the opposite: {op.why}"


def documented_notes(ops: Sequence[OpPolicy], low: str) -> tuple[Note, ...]:
    """One note per op whose measurement contradicts what PyTorch documents, with the reason.

    Also a note where the docs and torch's test lists disagree with each other.
    """
    notes = []
    for op in ops:
        doc = op.documented
        if doc is None:
            continue
        if op.disagrees:
            source = TESTS_NOTE_SOURCE if doc.tests is not None else DOCS_NOTE_SOURCE
            notes.append(
                Note(
                    op=op.name,
                    source=source,
                    claim=f"{doc.name} {DOCUMENTED_WORDS.get(doc.policy, doc.policy)}",
                    measured=_measured_words(op, low),
                    verdict=disagreement_explanation(op, low),
                    contradicts=True,
                )
            )
        if doc.sources_disagree():
            notes.append(
                Note(
                    op=op.name,
                    source=DOCS_NOTE_SOURCE,
                    claim=f"{doc.name} {DOCUMENTED_WORDS.get(doc.docs or '', doc.docs)}",
                    measured=_measured_words(op, low),
                    verdict=f"torch's test lists expect {doc.tests} instead (they are checked "
                    "against this torch, so the table uses theirs)",
                    contradicts=not op.disagrees,
                )
            )
    return tuple(notes)


def documented_sources(tests: TestLists) -> dict[str, str]:
    """Where the documented column comes from, stated once per probe."""
    if tests.problem:
        origin = f"torch {tests.torch_version} {TEST_LISTS_CLASS}: {tests.problem}"
    else:
        origin = f"torch {tests.torch_version} {TEST_LISTS_CLASS}, read from {tests.path}"
    return {"docs": DOCS_ORIGIN, "tests": origin}


def select_specs(
    only: Sequence[str] = (), names: Sequence[str] = (), specs: Sequence[OpSpec] = PROBED_OPS
) -> tuple[OpSpec, ...]:
    """The specs in categories `only` (slugs) and/or named `names`; all when both are empty.

    Raises ConfigError naming the unknown category or op.
    """
    slugs = []
    for text in only:
        slug = category_slug(text)
        if slug is None:
            raise ConfigError(
                "only", f"unknown category {text!r} (choose from {', '.join(CATEGORIES)})"
            )
        slugs.append(slug)
    known = {spec.name for spec in specs}
    for name in names:
        if name not in known:
            wanted = name.lower()
            close = sorted(
                (k for k in known if wanted in k.lower()),
                key=lambda k: (not k.lower().startswith(wanted), k),
            )[:5]
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ConfigError("op", f"unknown op {name!r}{hint}")
    if not only and not names:
        return tuple(specs)
    return tuple(s for s in specs if s.category in slugs or s.name in names)


#: Torch threads for the probe unless told otherwise. Its ops are tiny, so more threads only
#: add OpenMP wake-ups; on a busy 2-core machine 2 threads made the probe 3-15× slower
#: (bench/op_probe.py).
PROBE_THREADS = 1


def probe_ops(
    dtype: str = "bfloat16",
    specs: Sequence[OpSpec] = PROBED_OPS,
    threads: int | None = PROBE_THREADS,
    progress: ProgressFn | None = None,
    cancel: CancelFn | None = None,
) -> ProbeResult:
    """Probe every op in `specs` under CPU autocast with `dtype`; cancel is checked per op.

    `threads=None` leaves torch's own thread count.
    """
    if dtype not in DTYPES:
        raise ConfigError("dtype", f"must be one of {', '.join(DTYPES)} (got {dtype!r})")
    validate_threads(threads)
    reporter = Reporter(progress, cancel)
    low = TORCH_DTYPES[dtype]
    tests = installed_test_lists()
    results = []
    with torch_threads(threads) as used:
        for index, spec in enumerate(specs):
            reporter.check()
            reporter.report(index / max(1, len(specs)), f"probing {spec.name}")
            results.append(probe_op(spec, low, tests))
    reporter.report(1.0, "done")
    return ProbeResult(
        dtype=dtype,
        environment=environment(used),
        ops=tuple(results),
        notes=belief_notes(results, dtype) + documented_notes(results, dtype),
        created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        sources=documented_sources(tests),
    )


def op_matches(op: OpPolicy, query: str) -> bool:
    """Does `op` match a filter? Every word must occur in its name, category, measured or
    documented policy (or be "disagree"/"!" for an op that contradicts its documentation)."""
    label = CATEGORIES.get(op.category, op.category)
    documented_policy = op.documented.policy if op.documented else ""
    haystack = " ".join((op.name, op.category, label, op.policy, documented_policy)).lower()
    for word in query.lower().split():
        if word in ("!", "disagree", "disagrees", "disagreement", "disagreements"):
            if not op.disagrees:
                return False
        elif word not in haystack:
            return False
    return True


def grouped_ops(
    ops: Sequence[OpPolicy], query: str = "", disagreements_first: bool = False
) -> list[tuple[str, list[OpPolicy]]]:
    """(group, ops) for a table: categories in CATEGORIES order, filtered by `query`; with
    `disagreements_first`, ops that contradict their documentation come first in their own
    group. Empty groups are left out."""
    order = {slug: i for i, slug in enumerate(CATEGORIES)}
    shown = [op for op in ops if op_matches(op, query)]
    groups: list[tuple[str, list[OpPolicy]]] = []
    if disagreements_first:
        first = [op for op in shown if op.disagrees]
        if first:
            groups.append((DISAGREEMENTS_GROUP, first))
        shown = [op for op in shown if not op.disagrees]
    by_category: dict[str, list[OpPolicy]] = {}
    for op in sorted(shown, key=lambda o: order.get(o.category, len(order))):
        by_category.setdefault(op.category, []).append(op)
    groups += list(by_category.items())
    return groups

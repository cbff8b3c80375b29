"""The op-policy probe's result document (schema `autocast-explorer/ops/1`): each op's measured
policy, the input cases it rests on, the notes beside them; reading, writing and the schema.

How the cases are run and classified is core.numerics.oppolicy's; the notes' words are
core.numerics.opnotes'.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, Field, WithJsonSchema

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
from autocast_explorer.core.hardware.cpu import Environment, EnvironmentPart
from autocast_explorer.core.numerics.documented import Documented
from autocast_explorer.core.numerics.opcatalog import PROBED_OPS
from autocast_explorer.core.numerics.opcategories import CATEGORIES
from autocast_explorer.core.runtime.dtypes import DTYPES

SCHEMA = "autocast-explorer/ops/1"
#: Input cases in the order they are run; the mixed ones only for ops with ≥ 2 float inputs.
CASES: tuple[str, ...] = ("float32", "low", "low_first", "float32_first")
CASE_LABELS: dict[str, str] = {
    "float32": "float32 inputs",
    "low": "low-precision inputs",
    "low_first": "first input low, others float32",
    "float32_first": "first input float32, others low",
}
#: Policies in the order tables and counts list them.
POLICY_ORDER: tuple[str, ...] = ("lower", "fp32", "follows", "promote", "error", "other")


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

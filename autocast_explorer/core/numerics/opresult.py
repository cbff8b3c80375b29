"""The op-policy probe's result document (schema `autocast-explorer/ops/1`): each op's measured
policy, the input cases it rests on, the notes beside them; reading, writing and the schema.

How the cases are run and classified is core.numerics.oppolicy's; the notes' words are
core.numerics.opnotes'.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, Field, WithJsonSchema, model_validator
from pydantic.json_schema import SkipJsonSchema

from autocast_explorer.core.documents.field_types import (
    Flag,
    NullableText,
    Text,
    TextMap,
    Texts,
    Whole,
    refuse,
    schema_tag,
    text_rules,
)
from autocast_explorer.core.documents.model import OpenPart, Part, dump, read, schema
from autocast_explorer.core.documents.reader import (
    DocumentFormatError,
    document_kind,
    load_document,
)
from autocast_explorer.core.hardware.cpu import Environment
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


class CaseResult(Part):
    """One input case of one op: input dtypes, the output dtype (or the error), casts seen."""

    schema_name: ClassVar[str] = "case"

    #: The case's name: its key in the op's `cases` (not written inside it).
    case: Annotated[str, SkipJsonSchema(), Field(exclude=True)] = ""
    in_dtypes: Annotated[Texts, Field(alias="in", description="the input dtypes")]
    out_dtype: Annotated[
        NullableText, Field(alias="out", description="null when the op raised")
    ] = None
    #: The floating dtype the op computed in, when its output does not say it (a comparison's
    #: bool, a rank's int64: the dtype its kernel received; a complex result: its real dtype).
    computed: Annotated[
        NullableText,
        Field(
            description="the dtype the op computed in where its output does not say it (bool, "
            "int64, complex results); null otherwise"
        ),
    ] = None
    error: NullableText = None
    casts: Whole = 0
    #: The aten ops dispatched (casts excluded), in order, each once.
    kernels: Annotated[Texts, Field(description="the aten ops dispatched, casts left out")] = ()

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
        return dump(self)


class OpPolicy(Part):
    """The measured policy of one op, the cases it rests on, and a sentence saying why."""

    schema_name: ClassVar[str] = "op"

    name: Text
    #: From the catalog where none is given (older files: null); '' for an op it does not hold.
    category: Annotated[
        str,
        *text_rules(),
        WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "null"}]}),
        Field(description="the catalog's category slug"),
    ] = Field(default="", json_schema_extra={"default": None})
    policy: Text
    why: Text = ""
    error: NullableText = None
    #: What PyTorch publishes for this op (None in probe files written before it was kept).
    documented: Documented | None = None
    #: Does this torch on this CPU contradict what PyTorch documents for the op? Computed when
    #: not given.
    disagrees: Annotated[
        Flag, Field(description="the measured policy contradicts the documented")
    ] = False
    #: The cases by name, in the order they ran (`cases` gives them as a tuple).
    by_case: Annotated[dict[str, CaseResult], Field(alias="cases")]

    @model_validator(mode="before")
    @classmethod
    def _derived(cls, data: Any) -> Any:
        """The category from the catalog where none is given; `disagrees` from `documented`;
        each case named by its key."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if data.get("category") in (None, ""):
            data["category"] = category_of(data.get("name"))
        documented = data.get("documented")
        if "disagrees" not in data and not isinstance(documented, dict):
            data["disagrees"] = isinstance(documented, Documented) and not documented.agrees_with(
                str(data.get("policy"))
            )
        for key in ("cases", "by_case"):
            cases = data.get(key)
            if isinstance(cases, dict):
                data[key] = {
                    name: {**case, "case": name} if isinstance(case, dict) else case
                    for name, case in cases.items()
                }
        return data

    @property
    def cases(self) -> tuple[CaseResult, ...]:
        return tuple(self.by_case.values())

    def case(self, name: str) -> CaseResult | None:
        return self.by_case.get(name)

    def out(self, name: str) -> str | None:
        case = self.case(name)
        return case.out_dtype if case else None

    def to_dict(self) -> dict[str, Any]:
        return dump(self)

    @classmethod
    def from_dict(cls, data: Any, path: str = "op") -> OpPolicy:
        return read(cls, data, at=path)


def category_of(name: Any) -> str:
    """The catalog's category for an op name ('' for one the catalog does not hold)."""
    return next((spec.category for spec in PROBED_OPS if spec.name == name), "")


class Note(Part):
    """A common belief about an op next to what was measured here, and whether it holds."""

    op: Text
    source: Text
    claim: Text
    measured: Text
    verdict: Text
    contradicts: Flag

    def to_dict(self) -> dict[str, Any]:
        return dump(self)

    @classmethod
    def from_dict(cls, data: Any, path: str = "note") -> Note:
        return read(cls, data, at=path)


#: A document that is not a valid op-policy probe result (the one document error class).
ProbeFormatError = DocumentFormatError


class ProbeResult(OpenPart):
    """The op-policy probe: which dtype autocast gave each op, beside what PyTorch documents."""

    # The whole probe for one autocast dtype on this machine and torch.
    schema_name: ClassVar[str] = "probe"
    #: The document kind: it leads refusals and names fallback files ("probe-….json").
    KIND: ClassVar[str] = "probe"

    schema_: Annotated[str, schema_tag(SCHEMA), Field(alias="schema")]
    created: Text = ""
    dtype: Annotated[str, *_one_of(DTYPES), Field(description="the autocast dtype")]
    environment: Environment
    #: Where the documented policies came from: {"docs": …, "tests": …} (stated once).
    sources: Annotated[
        TextMap, Field(description="where the documented policies come from (docs, tests)")
    ] = Field(default_factory=dict)
    ops: tuple[OpPolicy, ...]
    notes: tuple[Note, ...] = Field(
        default=(),
        description="disagreements with PyTorch's documentation (source starts 'documented "
        "for CPU') and common beliefs, next to what was measured here",
    )

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
        return dump(self)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: Any) -> ProbeResult:
        """Strict: DocumentFormatError naming `probe` and the first bad field."""
        return read(cls, data, cls.KIND)

    @classmethod
    def from_json(cls, text: str | bytes) -> ProbeResult:
        with document_kind(cls.KIND):
            return cls.from_dict(load_document(text))


def probe_schema() -> dict[str, Any]:
    """The published schema of the probe document (tools/write_schemas.py writes it)."""
    return schema(
        ProbeResult,
        SCHEMA,
        "Autocast Explorer op-policy probe",
        "Which dtype torch.autocast('cpu') gave each op on PyTorch's CPU autocast lists (and "
        "common unlisted ones), measured with float32, low-precision and mixed inputs, beside "
        "what PyTorch documents: written by `autocast-explorer ops --json` and the window's "
        "Ops tab.",
    )

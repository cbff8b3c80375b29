"""The plan document (kind `plan`, schema `autocast-explorer/plan/1`): what to run, why, and
every candidate the search timed. Written by `autocast-explorer plan --json` and the Plan tab;
read back by `plan --verify`.

    outcome: "plan" | "float32" | "none", criterion,
    chosen: {route, dtype, threads, keep_float32[], speedup_interval{low, high, estimate},
             criterion_value, and where they apply flipped{count, held_out} (real data) and
             identical_to_float32 (true: its answers were float32's bit for bit)},
    candidates[]: the same fields plus met and why_not,
    sensitivity[]: {name, one_in, leave_out, time_share_plain, time_share_lower},
    first_divergent (a row name or null), snippet, budget_s, spent_s
"""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from autocast_explorer.core.documents.field_types import (
    Flag,
    MeasuredNonNegative,
    MultilineText,
    NonNegative,
    NullableFraction,
    NullableNumber,
    NullableText,
    Omittable,
    PositiveWhole,
    Text,
    Texts,
    Whole,
    schema_tag,
)
from autocast_explorer.core.documents.held import write_always
from autocast_explorer.core.documents.model import OpenPart, Part, dump, read, schema
from autocast_explorer.core.documents.reader import document_kind, load_document
from autocast_explorer.core.experiment.config_schema import config_schema
from autocast_explorer.core.experiment.result import ConfigField
from autocast_explorer.core.hardware.cpu import Environment

SCHEMA = "autocast-explorer/plan/1"
#: "plan": the fastest candidate that meets the criterion; "float32": no lower precision beat
#: float32 (chosen is the fastest float32 route); "none": nothing met it (chosen is the closest).
OUTCOMES = ("plan", "float32", "none")
Outcome = Literal["plan", "float32", "none"]


class SpeedupInterval(Part):
    """A candidate's speedup against plain float32 eager: the paired estimate and its 95%
    interval (above 1: faster than float32)."""

    schema_name: ClassVar[str] = "plan_speedup"

    low: MeasuredNonNegative
    high: MeasuredNonNegative
    estimate: MeasuredNonNegative


class PlanFlips(Part):
    """On real data: the held-out rows whose predicted class differs from float32's."""

    schema_name: ClassVar[str] = "plan_flips"

    count: Whole
    held_out: PositiveWhole


class PlanChoice(Part):
    """One way to run the model: route, dtype, threads and the layers kept in float32 (module
    paths: the user's own keep-set first, in every lower-precision candidate). `flipped` is
    written on real data only; `identical_to_float32` only when true (then nothing it lowered
    changed an answer: it is float32 after all, not a lower precision)."""

    route: Text
    dtype: Text
    threads: PositiveWhole
    keep_float32: Texts = ()
    speedup_interval: SpeedupInterval | None = None
    criterion_value: NullableNumber = None
    flipped: PlanFlips | None = None  # left unset (not written) where not counted
    identical_to_float32: Omittable[Flag] = None
    memory_mb: Annotated[
        Omittable[NonNegative],
        Field(
            description="estimated peak memory (MiB) of running it: weights, input, one "
            "forward's live tensors in its dtype and the runtime's, from a trace on fake "
            "tensors, plus a compile's; absent when the model could not be traced"
        ),
    ] = None

    @model_validator(mode="after")
    def _every_key_written(self) -> PlanChoice:
        write_always(self, "keep_float32", "speedup_interval", "criterion_value")
        return self


class PlanCandidate(PlanChoice):
    """A choice the search timed, whether it met the criterion and, if it lost, why."""

    met: Flag
    why_not: Text = ""

    @model_validator(mode="after")
    def _why_not_written(self) -> PlanCandidate:
        write_always(self, "why_not")
        return self


class SensitivityRow(Part):
    """One row's share of the damage and of the time. `one_in`: the criterion's measure when
    only this row runs lower; `leave_out`: when only this row is kept float32 (NaN: not
    measured); time shares: the row's share of the forward's time in each mode."""

    name: Text
    one_in: NullableNumber = None
    leave_out: NullableNumber = None
    time_share_plain: NullableFraction = None
    time_share_lower: NullableFraction = None

    @model_validator(mode="after")
    def _every_key_written(self) -> SensitivityRow:
        write_always(self, "one_in", "leave_out", "time_share_plain", "time_share_lower")
        return self


class PlanDocument(OpenPart):
    """A measured precision plan for one model on one CPU."""

    KIND: ClassVar[str] = "plan"
    schema_name: ClassVar[str] = "plan"

    schema_: Annotated[str, schema_tag(SCHEMA), Field(alias="schema")] = SCHEMA
    created: Annotated[Text, Field(description="ISO 8601 UTC time")] = ""
    config: ConfigField
    environment: Environment
    outcome: Outcome
    criterion: Text
    chosen: PlanChoice
    candidates: tuple[PlanCandidate, ...] = ()
    sensitivity: tuple[SensitivityRow, ...] = ()
    first_divergent: NullableText = None
    snippet: MultilineText = ""
    budget_s: NonNegative
    spent_s: NonNegative

    @model_validator(mode="after")
    def _every_key_written(self) -> PlanDocument:
        keys = ("schema_", "created", "candidates", "sensitivity", "first_divergent", "snippet")
        write_always(self, *keys)
        return self

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(dump(self), indent=indent, allow_nan=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> PlanDocument:
        """Strict: DocumentFormatError naming `plan` and the first bad field."""
        with document_kind(cls.KIND):
            return read(cls, load_document(text), cls.KIND)


def plan_schema() -> dict[str, Any]:
    """The published schema (tools/write_schemas.py writes resources/schemas/plan.json)."""
    return schema(
        PlanDocument,
        SCHEMA,
        "Autocast Explorer precision plan",
        "What to run for one model on one CPU, measured: written by `autocast-explorer plan "
        "--json` and the Plan tab, read by `plan --verify`. Readers ignore keys they do not know.",
        defs={"config": config_schema(closed=False)},
    )

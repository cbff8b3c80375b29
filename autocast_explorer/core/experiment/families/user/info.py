"""What a result records about a user model (JSON `model_info`): which module ran, how big it
is, what file it came from (sha256), the input it was given and how its layers were grouped.
A part of its own so it travels as one piece; results of built-in families lack it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field

from autocast_explorer.core.documents.field_types import (
    MultilineText,
    PositiveWhole,
    PositiveWholes,
    Text,
    Whole,
    Wholes,
)
from autocast_explorer.core.documents.model import Part, build, dump


class ModelInfoPart(Part):
    """The result's `model_info`: your own model (--model SPEC), what ran."""

    spec: Annotated[Text, Field(description="the model spec that was run")]
    class_name: Annotated[Text, Field(description="the module's class")]
    parameters: Whole
    sha256: str | None = Field(
        pattern="^[0-9a-f]{64}$", description="a file spec: the file's sha256 (else null)"
    )
    input_shape: Annotated[PositiveWholes, Field(description="one sample's shape")]
    input_kind: Literal["float", "tokens"]
    output_shape: Wholes
    layer_depth: Annotated[
        PositiveWhole, Field(description="the module depth the layer rows are cut at")
    ]
    modules: Annotated[
        Whole,
        Field(
            description="modules the forward called (the rows before grouping); training: every "
            "submodule"
        ),
    ]
    no_argmax_reason: Annotated[MultilineText, Field(description="why agreement has no argmax")] = (
        ""
    )


@dataclass(frozen=True)
class ModelInfo:
    """`input_shape` per sample; `layer_depth` the module depth the layer rows are cut at,
    `modules` how many modules the forward called (the rows before grouping)."""

    spec: str
    class_name: str
    parameters: int
    sha256: str | None
    input_shape: tuple[int, ...]
    input_kind: str
    output_shape: tuple[int, ...]
    layer_depth: int
    modules: int
    no_argmax_reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dump(self.to_part())

    def to_part(self) -> ModelInfoPart:
        return build(
            ModelInfoPart,
            spec=self.spec,
            class_name=self.class_name,
            parameters=self.parameters,
            sha256=self.sha256,
            input_shape=self.input_shape,
            input_kind=self.input_kind,
            output_shape=self.output_shape,
            layer_depth=self.layer_depth,
            modules=self.modules,
            no_argmax_reason=self.no_argmax_reason,
        )

    @classmethod
    def from_part(cls, part: ModelInfoPart) -> ModelInfo:
        return cls(
            spec=part.spec,
            class_name=part.class_name,
            parameters=part.parameters,
            sha256=part.sha256,
            input_shape=tuple(part.input_shape),
            input_kind=part.input_kind,
            output_shape=tuple(part.output_shape),
            layer_depth=part.layer_depth,
            modules=part.modules,
            no_argmax_reason=part.no_argmax_reason,
        )

"""What a result records about a user model (JSON `model_info`): which module ran, how big it
is, what file it came from (sha256), the input it was given and how its layers were grouped.
A part of its own so it travels as one piece; results of built-in families lack it.
"""

from __future__ import annotations

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
from autocast_explorer.core.documents.model import Part, dump


class ModelInfo(Part):
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

    def to_dict(self) -> dict[str, Any]:
        return dump(self)

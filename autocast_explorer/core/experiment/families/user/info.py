"""What a result records about a user model (JSON `model_info`): which module ran, how big it
is, what file it came from (sha256), the input it was given and how its layers were grouped.
A sub-document of its own so it travels as one piece; results of built-in families lack it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autocast_explorer.core.documents.reader import JsonReader


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
        return {
            "spec": self.spec,
            "class_name": self.class_name,
            "parameters": self.parameters,
            "sha256": self.sha256,
            "input_shape": list(self.input_shape),
            "input_kind": self.input_kind,
            "output_shape": list(self.output_shape),
            "layer_depth": self.layer_depth,
            "modules": self.modules,
            "no_argmax_reason": self.no_argmax_reason,
        }

    @classmethod
    def from_reader(cls, r: JsonReader) -> ModelInfo:
        sha = r.data.get("sha256")
        if sha is not None and not (
            isinstance(sha, str) and len(sha) == 64 and all(c in "0123456789abcdef" for c in sha)
        ):
            raise r.fail("sha256", "expected 64 lowercase hex digits or null")
        kind = r.text("input_kind")
        if kind not in ("float", "tokens"):
            raise r.fail("input_kind", "expected float or tokens")
        return cls(
            spec=r.text("spec"),
            class_name=r.text("class_name"),
            parameters=r.whole("parameters", minimum=0),
            sha256=sha,
            input_shape=tuple(r.wholes("input_shape", minimum=1)),
            input_kind=kind,
            output_shape=tuple(r.wholes("output_shape", minimum=0)),
            layer_depth=r.whole("layer_depth", minimum=1),
            modules=r.whole("modules", minimum=0),
            no_argmax_reason=r.text("no_argmax_reason", default=""),
        )

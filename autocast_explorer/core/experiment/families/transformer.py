"""A transformer encoder classifier: `depth` TransformerEncoderLayers, mean over tokens, Linear.

In eval mode under no_grad, torch runs each encoder layer as one fused kernel (its "fast
path"); in train mode, or when the fast path is turned off here, it runs the ordinary modules
one by one. The two paths return different dtypes under autocast, which is the point of
offering the switch: `fast_path=False` measures the model in train mode (dropout is 0, so the
numbers are the same computation).
"""

from __future__ import annotations

from collections.abc import Collection

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families.base import (
    SEQUENCE_LENGTH,
    Construction,
    Family,
    FamilyParam,
    Gemm,
    SweptSize,
)
from autocast_explorer.core.runtime.errors import ConfigError


class TransformerFamily(Family):
    name = "transformer"
    title = "Transformer"
    params = (
        FamilyParam("d_model"),
        FamilyParam("heads"),
        FamilyParam("seq", "tokens per sequence"),
        FamilyParam("depth", "encoder layers"),
        FamilyParam("ff"),
        FamilyParam("classes"),
        FamilyParam("fast_path"),
    )
    sweeps = (SEQUENCE_LENGTH, SweptSize("d_model", "d_model", (32, 512, 5)))

    def validate(self, config: ExperimentConfig) -> None:
        super().validate(config)
        if config.d_model % config.heads:
            raise ConfigError(
                "heads",
                f"d_model {config.d_model} is not divisible by {config.heads} heads; "
                "pick heads that divide d_model",
            )

    def describe(self, config: ExperimentConfig) -> str:
        path = "" if config.fast_path else " · fast path off"
        return (
            f"Transformer d_model {config.d_model} · {config.heads} heads · depth "
            f"{config.depth} · ff {config.ff} · seq {config.seq} · {config.classes} classes{path}"
        )

    def gemms(self, config: ExperimentConfig) -> tuple[Gemm, ...]:
        b, s, d, f, h = config.batch, config.seq, config.d_model, config.ff, config.heads
        tokens = b * s
        layer = (
            Gemm("linear", tokens, d, 3 * d),  # attention in-projection (q, k, v)
            Gemm("bmm", s, d // h, s, count=b * h),  # scores q·kᵀ
            Gemm("bmm", s, s, d // h, count=b * h),  # weighted values
            Gemm("linear", tokens, d, d),  # attention out-projection
            Gemm("linear", tokens, d, f),  # feed-forward up
            Gemm("linear", tokens, f, d),  # feed-forward down
        )
        return (*layer * config.depth, Gemm("linear", b, d, config.classes))

    def parameter_count(self, config: ExperimentConfig) -> int:
        d, f = config.d_model, config.ff
        per_layer = (3 * d * d + 3 * d) + (d * d + d) + (d * f + f) + (f * d + d) + 4 * d
        return per_layer * config.depth + d * config.classes + config.classes

    def activation_elements(self, config: ExperimentConfig) -> int:
        b, s, d = config.batch, config.seq, config.d_model
        per_layer = b * s * (9 * d + config.ff) + b * config.heads * s * s
        return self.input_elements(config) + per_layer * config.depth + b * (d + config.classes)

    def input_elements(self, config: ExperimentConfig) -> int:
        return config.batch * config.seq * config.d_model

    def fused(self, called: Collection[str]) -> bool:
        """Whether the fused kernel ran: an encoder layer was called but not its attention."""
        layers = [n for n in called if n.startswith("encoder") and "." not in n]
        return bool(layers) and all(f"{n}.self_attn" not in called for n in layers)

    def construction(self) -> Construction:
        from autocast_explorer.core.experiment.families.construct import transformer

        return Construction(transformer.transformer_model, transformer.transformer_input)

"""The transformer encoder classifier: `depth` TransformerEncoderLayers, mean over tokens,
Linear; in train mode when the fused fast path is off (dropout is 0, the same computation)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import torch

from autocast_explorer.core.experiment.families.construct.common import (
    activation_module,
    draw_input,
    with_head,
)


class MeanOverTokens(torch.nn.Module):
    """Average the token dimension: (batch, seq, d_model) → (batch, d_model)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=1)


def encoder_activation(name: str) -> str | torch.nn.Module:
    """'relu'/'gelu' as text, as the fused fast path needs them; others as modules, which keep
    the layer on the ordinary path."""
    if name in ("relu", "gelu"):
        return name
    return activation_module(name) or torch.nn.Identity()


def transformer_model(config: Mapping[str, Any]) -> torch.nn.Sequential:
    """Seed, the encoder layers in order, pooling and the classifier."""
    torch.manual_seed(config["seed"])
    layers: OrderedDict[str, torch.nn.Module] = OrderedDict()
    for i in range(1, config["depth"] + 1):
        layers[f"encoder{i}"] = torch.nn.TransformerEncoderLayer(
            config["d_model"],
            config["heads"],
            dim_feedforward=config["ff"],
            dropout=0.0,
            activation=encoder_activation(config["activation"]),
            batch_first=True,
        )
    layers["pool"] = MeanOverTokens()
    layers["fc"] = torch.nn.Linear(config["d_model"], config["classes"])
    return with_head(config, layers, train=not config["fast_path"])


def transformer_input(config: Mapping[str, Any]) -> torch.Tensor:
    """A batch of token sequences, each token d_model wide."""
    return draw_input(config, (config["batch"], config["seq"], config["d_model"]))

"""What every family's construction shares: activations, heads, the input draw, assembly."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import torch


def activation_module(name: str) -> torch.nn.Module | None:
    """The activation layer for a config's `activation` (None for 'none')."""
    factory = {
        "relu": torch.nn.ReLU,
        "gelu": torch.nn.GELU,
        "tanh": torch.nn.Tanh,
        "sigmoid": torch.nn.Sigmoid,
    }.get(name)
    return factory() if factory is not None else None


def head_module(name: str, dim: int = 1) -> torch.nn.Module | None:
    """The optional output head (softmax / log_softmax over classes)."""
    if name == "softmax":
        return torch.nn.Softmax(dim=dim)
    if name == "log_softmax":
        return torch.nn.LogSoftmax(dim=dim)
    return None


def with_head(
    config: Mapping[str, Any], layers: OrderedDict[str, torch.nn.Module], train: bool = False
) -> torch.nn.Sequential:
    """The layers with the config's optional head last, in the mode the measurement uses."""
    head = head_module(config["head"])
    if head is not None:
        layers[config["head"]] = head
    model = torch.nn.Sequential(layers)
    model.train(train)
    return model


def draw_input(config: Mapping[str, Any], shape: tuple[int, ...]) -> torch.Tensor:
    """x of `shape` with the config's distribution and scale (normal, scale 1 = torch.randn)."""
    if config["input_distribution"] == "uniform":
        x = torch.rand(shape) * 2.0 - 1.0
    else:
        x = torch.randn(shape)
    if config["input_scale"] != 1.0:
        x = x * config["input_scale"]
    return x

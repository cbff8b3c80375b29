"""The CNN: stages of Conv2d 3×3 → BatchNorm2d → activation → MaxPool2d 2, global average
pooling, a Linear classifier (BatchNorm keeps its initial running statistics in eval mode)."""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import torch

from autocast_explorer.core.experiment.families.construct.common import (
    activation_module,
    draw_input,
    with_head,
)


def cnn_model(config: Mapping[str, Any]) -> torch.nn.Sequential:
    """Seed, the stages in order, pooling and the classifier; returned in eval mode."""
    torch.manual_seed(config["seed"])
    channels = config["channels"]
    layers: OrderedDict[str, torch.nn.Module] = OrderedDict()
    for i, (c_in, c_out) in enumerate(itertools.pairwise(channels), start=1):
        layers[f"conv{i}"] = torch.nn.Conv2d(c_in, c_out, kernel_size=3, padding=1)
        layers[f"bn{i}"] = torch.nn.BatchNorm2d(c_out)
        act = activation_module(config["activation"])
        if act is not None:
            layers[f"{config['activation']}{i}"] = act
        layers[f"pool{i}"] = torch.nn.MaxPool2d(2)
    layers["gap"] = torch.nn.AdaptiveAvgPool2d(1)
    layers["flatten"] = torch.nn.Flatten()
    layers["fc"] = torch.nn.Linear(channels[-1], config["classes"])
    return with_head(config, layers)


def cnn_input(config: Mapping[str, Any]) -> torch.Tensor:
    """A batch of square images with the config's input channels."""
    side = config["image"]
    return draw_input(config, (config["batch"], config["channels"][0], side, side))

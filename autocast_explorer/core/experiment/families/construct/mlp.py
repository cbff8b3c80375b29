"""The MLP: Linear/activation pairs in order (the tutorial's model), an optional head."""

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


def mlp_model(config: Mapping[str, Any]) -> torch.nn.Sequential:
    """Seed, then Linear/activation pairs in order, an optional head; returned in eval mode.

    Layers are named fc1, relu1, fc2 … so tables and charts read naturally; the names do not
    change the parameters, which come from the RNG in construction order as in the tutorial.
    """
    torch.manual_seed(config["seed"])
    layers: OrderedDict[str, torch.nn.Module] = OrderedDict()
    pairs = list(itertools.pairwise(config["widths"]))
    for index, (fan_in, fan_out) in enumerate(pairs, start=1):
        layers[f"fc{index}"] = torch.nn.Linear(fan_in, fan_out)
        act = activation_module(config["activation"]) if index < len(pairs) else None
        if act is not None:
            layers[f"{config['activation']}{index}"] = act
    return with_head(config, layers)


def mlp_input(config: Mapping[str, Any]) -> torch.Tensor:
    """One batch of rows as wide as the first layer, drawn after the model (same RNG stream)."""
    return draw_input(config, (config["batch"], config["widths"][0]))

"""The fake family's torch-only construction (tests/gui/test_family_registry.py): `depth`
Linear hidden→hidden layers with ReLU between, built from the config's existing fields. Its own
module, as a family's construction is, so the reproduce script can paste it."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import torch

from autocast_explorer.core.experiment.families.construct.common import draw_input


def ladder_model(config: Mapping[str, Any]) -> torch.nn.Sequential:
    """Seeded: fc1, relu1, fc2 … (no ReLU after the last), in eval mode."""
    torch.manual_seed(config["seed"])
    layers: OrderedDict[str, torch.nn.Module] = OrderedDict()
    for index in range(1, config["depth"] + 1):
        layers[f"fc{index}"] = torch.nn.Linear(config["hidden"], config["hidden"])
        if index < config["depth"]:
            layers[f"relu{index}"] = torch.nn.ReLU()
    return torch.nn.Sequential(layers).eval()


def ladder_input(config: Mapping[str, Any]) -> torch.Tensor:
    """One batch of rows as wide as the hidden layers."""
    return draw_input(config, (config["batch"], config["hidden"]))

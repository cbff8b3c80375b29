"""The tutorial's model: Linear layers with an activation between them (widths in the config)."""

from __future__ import annotations

import itertools
from collections import OrderedDict
from typing import TYPE_CHECKING

from autocast_explorer.core.experiment.config import ExperimentConfig, parameter_count
from autocast_explorer.core.experiment.families.base import (
    Family,
    Gemm,
    activation_module,
    draw_input,
    head_module,
)
from autocast_explorer.core.runtime.errors import ConfigError

if TYPE_CHECKING:
    import torch


class MlpFamily(Family):
    name = "mlp"
    title = "MLP"
    uses = frozenset({"widths", "activation", "head"})
    sweep_params = ("width",)

    def describe(self, config: ExperimentConfig) -> str:
        return f"MLP {','.join(map(str, config.widths))}"

    def gemms(self, config: ExperimentConfig) -> tuple[Gemm, ...]:
        return tuple(
            Gemm("linear", config.batch, a, b) for a, b in itertools.pairwise(config.widths)
        )

    def parameter_count(self, config: ExperimentConfig) -> int:
        return parameter_count(config.widths)

    def activation_elements(self, config: ExperimentConfig) -> int:
        return config.batch * sum(config.widths)

    def input_elements(self, config: ExperimentConfig) -> int:
        return config.batch * config.widths[0]

    def sweep_config(self, config: ExperimentConfig, param: str, value: int) -> ExperimentConfig:
        """A width sweep sets every hidden width at once; input width and classes stay."""
        if param != "width":
            return super().sweep_config(config, param, value)
        if len(config.widths) < 3:
            raise ConfigError(
                "widths", "a width sweep needs at least one hidden layer (3 or more widths)"
            )
        hidden = (value,) * (len(config.widths) - 2)
        return config.replace(widths=(config.widths[0], *hidden, config.widths[-1]))

    def sweep_label(self, param: str) -> str:
        return "hidden width" if param == "width" else param

    def build_model(self, config: ExperimentConfig) -> torch.nn.Module:
        return build_mlp(config)

    def build_input(self, config: ExperimentConfig) -> torch.Tensor:
        return draw_input(config, (config.batch, config.widths[0]))


def build_mlp(config: ExperimentConfig) -> torch.nn.Sequential:
    """Seed, then Linear/activation pairs in order, an optional head; returned in eval mode.

    Layers are named fc1, relu1, fc2 … so tables and charts read naturally; the names do not
    change the parameters, which come from the RNG in construction order as in the tutorial.
    The input is drawn after the model, from the same RNG stream, as the tutorial does.
    """
    import torch

    torch.manual_seed(config.seed)
    layers: dict[str, torch.nn.Module] = {}
    pairs = list(itertools.pairwise(config.widths))
    for index, (fan_in, fan_out) in enumerate(pairs, start=1):
        layers[f"fc{index}"] = torch.nn.Linear(fan_in, fan_out)
        act = activation_module(config.activation) if index < len(pairs) else None
        if act is not None:
            layers[f"{config.activation}{index}"] = act
    head = head_module(config.head)
    if head is not None:
        layers[config.head] = head
    model = torch.nn.Sequential(OrderedDict(layers))
    model.eval()
    return model

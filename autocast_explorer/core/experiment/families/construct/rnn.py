"""The recurrent classifier: nn.LSTM or nn.GRU over the sequence (one module: torch runs all
its layers and steps inside), the top layer's last hidden state, Linear."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import torch

from autocast_explorer.core.experiment.families.construct.common import draw_input, with_head


class LastStep(torch.nn.Module):
    """The last time step of a recurrent layer's output: the last hidden state of the top layer.

    Takes the (output, state) pair nn.LSTM / nn.GRU return; (batch, seq, hidden) → (batch, hidden).
    """

    def forward(self, recurrent: tuple[torch.Tensor, object]) -> torch.Tensor:
        return recurrent[0][:, -1]


def rnn_model(config: Mapping[str, Any]) -> torch.nn.Sequential:
    """Seed, the recurrent layer, the last step and the classifier; returned in eval mode."""
    torch.manual_seed(config["seed"])
    cell = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}[config["cell"]]
    layers: OrderedDict[str, torch.nn.Module] = OrderedDict()
    layers[config["cell"]] = cell(
        config["features"], config["hidden"], num_layers=config["depth"], batch_first=True
    )
    layers["last"] = LastStep()
    layers["fc"] = torch.nn.Linear(config["hidden"], config["classes"])
    return with_head(config, layers)


def rnn_input(config: Mapping[str, Any]) -> torch.Tensor:
    """A batch of sequences, `features` wide per time step."""
    return draw_input(config, (config["batch"], config["seq"], config["features"]))

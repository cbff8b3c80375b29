"""The few small modules the families need that torch does not name (they import torch)."""

from __future__ import annotations

import torch


class MeanOverTokens(torch.nn.Module):
    """Average the token dimension: (batch, seq, d_model) → (batch, d_model)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=1)


class LastStep(torch.nn.Module):
    """The last time step of a recurrent layer's output: the last hidden state of the top layer.

    Takes the (output, state) pair nn.LSTM / nn.GRU return; (batch, seq, hidden) → (batch, hidden).
    """

    def forward(self, recurrent: tuple[torch.Tensor, object]) -> torch.Tensor:
        return recurrent[0][:, -1]

"""Two small models, each with one layer planted to break under a lower precision: what the
plan's sensitivity locator must find (docs/deciding.md, bench/plan.py).

    autocast-explorer plan --model autocast_explorer.examples.planted_faults:float16_overflow \\
        --dtype float16 --criterion 'agree>=99%'
    autocast-explorer plan --model autocast_explorer.examples.planted_faults:bfloat16_offset \\
        --criterion 'agree>=99%'

- `float16_overflow`: `amplify` gives activations far above float16's largest value (65,504)
  and a LayerNorm brings them back. Under float16 autocast they become inf before the norm
  sees them, and the answers are NaN; with `amplify` alone kept in float32 they are fine.
- `bfloat16_offset`: `shift` adds a large constant that the model subtracts again later.
  bfloat16 keeps 8 significant bits, so next to 1024 its steps are 8 apart and the small
  signal riding on the offset is lost; with `shift` kept in float32 it survives.
"""

from __future__ import annotations

import torch
from torch import nn


class Float16Overflow(nn.Module):
    """embed → ReLU → amplify (×`gain`: values of about 10⁵ and more) → LayerNorm → head."""

    def __init__(self, features: int, width: int, classes: int, gain: float) -> None:
        super().__init__()
        self.embed = nn.Linear(features, width)
        self.amplify = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, classes)
        with torch.no_grad():
            self.amplify.weight.mul_(gain)
            self.amplify.bias.mul_(gain)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = torch.relu(self.embed(x))
        return self.head(torch.relu(self.norm(self.amplify(hidden))))


class Bfloat16Offset(nn.Module):
    """embed → ReLU → shift (+`offset` in its bias) → minus `offset` → head."""

    def __init__(self, features: int, width: int, classes: int, offset: float) -> None:
        super().__init__()
        self.embed = nn.Linear(features, width)
        self.shift = nn.Linear(width, width)
        self.head = nn.Linear(width, classes)
        self.offset = offset
        with torch.no_grad():
            self.shift.bias.add_(offset)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = torch.relu(self.embed(x))
        return self.head(self.shift(hidden) - self.offset)


def float16_overflow(
    features: int = 16, width: int = 64, classes: int = 4, gain: float = 1e6
) -> tuple[nn.Module, torch.Tensor]:
    """The float16 overflow model and one example input."""
    return Float16Overflow(features, width, classes, gain), torch.randn(1, features)


def bfloat16_offset(
    features: int = 16, width: int = 64, classes: int = 4, offset: float = 1024.0
) -> tuple[nn.Module, torch.Tensor]:
    """The bfloat16 offset model and one example input."""
    return Bfloat16Offset(features, width, classes, offset), torch.randn(1, features)

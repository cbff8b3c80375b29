"""An example of your own model for Autocast Explorer: copy this file and edit it.

Run it with either spec (a file path, or the module it is installed as):

    autocast-explorer run --model path/to/my_model.py:build
    autocast-explorer run --model autocast_explorer.examples.my_model:build --model-arg width=64

Importing this file runs it, as importing any Python module does: the explorer runs the code you
point it at, so point it only at code you trust (the window asks once per new file).

The factory (`build` here; any name works) is called with the `--model-arg KEY=VALUE` pairs as
keyword arguments (values read as int, float, true/false, a JSON list, else text). It returns
either an `nn.Module`, or `(module, example_input)`: the example's shape without its first
(batch) dimension becomes the input shape, and `--batch` sets the batch size. Without an example,
give `--input-shape` on the command line. Weights are random (seeded by `--seed`): autocast's
dtypes, casts, timing and error do not need trained weights, and nothing is downloaded.
"""

from __future__ import annotations

import torch
from torch import nn


class SmallNet(nn.Module):
    """A convolution stage, then a classifier: its output (batch × classes) is logits, so the
    explorer compares predicted classes (argmax) and trains it with cross-entropy."""

    def __init__(self, width: int = 32, classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, width, kernel_size=3, padding=1),
            nn.BatchNorm2d(width),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).flatten(1))


def build(width: int = 32, classes: int = 10, image: int = 32) -> tuple[nn.Module, torch.Tensor]:
    """The model and one example input (batch 1, 3 × image × image)."""
    return SmallNet(width, classes), torch.randn(1, 3, image, image)

"""An autocast forward that raises on every CPU kind, for tests of what is done with that finding.

oneDNN's bf16 LSTM raises only on some CPUs; this layer raises wherever autocast is on, so a
test of reports and comparisons of such a result holds on every CPU kind.
"""

from __future__ import annotations

import pytest
import torch

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.families import FAMILIES
from autocast_explorer.core.experiment.result import ExperimentResult

MESSAGE = "could not create a primitive descriptor for the test layer"


class RaisesUnderAutocast(torch.nn.Module):
    """A layer whose kernel refuses the autocast dtype, as oneDNN's LSTM does on some CPUs."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if torch.is_autocast_enabled("cpu"):
            raise RuntimeError(MESSAGE)
        return x * 2


def refusing_mlp(config: ExperimentConfig) -> torch.nn.Module:
    """Linear → RaisesUnderAutocast ('refuses') → Linear: the MLP family's model, made to fail."""
    torch.manual_seed(config.seed)
    model = torch.nn.Sequential()
    model.add_module("fc1", torch.nn.Linear(config.widths[0], 8))
    model.add_module("refuses", RaisesUnderAutocast())
    model.add_module("fc2", torch.nn.Linear(8, config.widths[-1]))
    return model.eval()


def failing_result(monkeypatch: pytest.MonkeyPatch) -> ExperimentResult:
    """A measured MLP result whose autocast forward raised at its second layer ('refuses')."""
    with monkeypatch.context() as patch:
        patch.setattr(FAMILIES["mlp"], "build_model", refusing_mlp)
        result = run_experiment(
            ExperimentConfig(widths=(16, 8, 4), batch=4, min_time=0.02, threads=1)
        )
    assert MESSAGE in result.autocast_error and result.autocast is None
    return result

"""Cancel stops a run within one forward, in every phase and at any time budget.

Counted, not timed: the model counts its forwards, the k-th forward asks to cancel, and after
it at most one more forward may begin (the one already past its last check). The budget is
60 s per mode, so a run that ignored the request would go on for minutes.
"""

from __future__ import annotations

import pytest
import torch

from autocast_explorer.core.experiment import engine
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.runtime.progress import Cancelled

CONFIG = ExperimentConfig(widths=(16, 16, 4), batch=4, min_time=60.0, threads=1)


class Counting(torch.nn.Module):
    """The built model, counting its forwards; the `stop_at`-th one asks to cancel."""

    def __init__(self, inner: torch.nn.Module, stop_at: int) -> None:
        super().__init__()
        self.inner = inner
        self.calls = 0
        self.stop_at = stop_at
        self.after_cancel = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if self.calls > self.stop_at:
            self.after_cancel += 1
        return self.inner(x)


# 1: the cold call · 3-4: the recorded forwards · 5-8: the traced ones · then warm-up and
# timing blocks of both modes.
@pytest.mark.parametrize("stop_at", [1, 2, 3, 4, 5, 6, 8, 9, 12, 40, 400])
def test_at_most_one_forward_after_cancel(monkeypatch, stop_at):
    built: list[Counting] = []
    real_build = engine.build

    def build(config):
        model, x = real_build(config)
        built.append(Counting(model, stop_at))
        return built[-1], x

    monkeypatch.setattr(engine, "build", build)
    with pytest.raises(Cancelled):
        engine.run_experiment(CONFIG, cancel=lambda: bool(built) and built[0].calls >= stop_at)
    (model,) = built
    assert model.calls >= stop_at
    assert model.after_cancel <= 1, f"{model.after_cancel} forwards began after the cancel"

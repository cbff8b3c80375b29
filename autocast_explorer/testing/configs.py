"""Configs sized for tests: every code path of a run, in a fraction of a second."""

from __future__ import annotations

from autocast_explorer.core.experiment.config import ExperimentConfig


def tiny_experiment() -> ExperimentConfig:
    """32→16→4 at batch 8 with 0.02 s of timing per mode: guards, capture and ABAB timing all
    run, and the run takes well under a second even on a loaded 2-core machine."""
    return ExperimentConfig(widths=(32, 16, 4), batch=8, min_time=0.02)

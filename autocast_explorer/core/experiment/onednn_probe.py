"""Ask oneDNN which kernels a config's model runs: the guards first, then `onednn.probe` on the
built model with the config's thread count (the window's "Ask oneDNN" task)."""

from __future__ import annotations

from autocast_explorer.core.experiment import guards
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families.user.guard import user_phase
from autocast_explorer.core.experiment.interventions import keeping
from autocast_explorer.core.experiment.model import build, low_precision_dtype
from autocast_explorer.core.hardware.onednn import OneDnnProbe, probe
from autocast_explorer.core.runtime.progress import CancelFn, ProgressFn, Reporter
from autocast_explorer.core.runtime.threads import torch_threads


def probe_config(
    config: ExperimentConfig,
    progress: ProgressFn | None = None,
    cancel: CancelFn | None = None,
) -> OneDnnProbe:
    """`onednn.probe` on the model of `config`, built after the memory and time guards passed, with
    the config's thread count and its layers kept in float32: what the window's "Ask oneDNN"
    measures."""
    reporter = Reporter(progress, cancel)
    reporter.report(0.05, "checking the memory and time guards")
    guards.check(config)
    reporter.check()
    with torch_threads(config.threads):
        reporter.report(0.3, "building the model")
        model, x = build(config)
        reporter.check()
        reporter.report(0.6, "asking oneDNN which kernels run (verbose log of one forward)")
        with (
            keeping(model, config.keep_float32),
            user_phase(config, "asking oneDNN which kernels run"),
        ):
            return probe(model, x, low_precision_dtype(config))

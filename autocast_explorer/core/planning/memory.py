"""What each way of running the model needs in memory: the weights, the input, one forward's
live tensors in the candidate's dtype and the runtime's own, from the guards' trace on fake
tensors (shadow_run.py; nothing is allocated), plus a compile's where the route compiles.

The layers a candidate keeps in float32 are counted in its lower dtype: their activations are
a small part of a forward's peak, and the trace is made once per dtype, not per keep-set.
"""

from __future__ import annotations

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.guards import COMPILE_BYTES, RUNTIME_BYTES
from autocast_explorer.core.experiment.shadow_run import shadow_run
from autocast_explorer.core.planning.choice import Choice


def memory_mb(config: ExperimentConfig, choice: Choice) -> float | None:
    """The estimated peak (MiB) of running `config`'s model as `choice` says; None when the
    model cannot be traced (the run itself says why, in its own phase)."""
    lowered = choice.lowered and choice.route != "implicit"  # implicit: float32 tensors
    traced_config = config.replace(dtype=choice.dtype) if lowered else config
    try:
        traced = shadow_run(traced_config)
    except KeyboardInterrupt:
        raise
    except Exception:
        return None
    peak = traced.forward_peak.get(choice.dtype if lowered else "float32")
    if peak is None:
        return None
    total = traced.parameter_bytes + traced.input_bytes + peak + RUNTIME_BYTES
    if choice.route == "compiled":
        total += COMPILE_BYTES
    return total / 2**20

"""The memory guard's quick bound, from the family's counts: arithmetic, no torch.

The window checks its inputs with it while the user edits, before torch has loaded (so that
Run can be enabled the moment torch is ready); the run's own guard traces the forward
(guards.traced_peak_bytes) and refuses with the same GuardError.
"""

from __future__ import annotations

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families import family
from autocast_explorer.core.hardware.free_memory import available_memory_bytes
from autocast_explorer.core.runtime.errors import ConfigError

#: Bytes per element of each lower dtype autocast offers (runtime.dtypes.DTYPES; a test checks
#: them against torch's itemsize).
LOW_DTYPE_BYTES = {"bfloat16": 2, "float16": 2}
#: Float32 copies of the parameters a training run holds at once: the initial model, two probe
#: gradients, and per trained copy its weights, gradients and up to two optimizer states (AdamW).
TRAINING_PARAMETER_COPIES = {"sgd": 1 + 2 + 2 * 3, "adamw": 1 + 2 + 2 * 4}
#: Distinct training batches a training task holds; steps cycle through them (bounded memory).
TRAIN_POOL_BATCHES = 8
#: Held-out batches for the final accuracy (never trained on).
HELD_OUT_BATCHES = 4


class GuardError(ConfigError):
    """A config is valid but too big for this machine (memory) or too slow (time)."""


def estimate_peak_bytes(config: ExperimentConfig) -> int:
    """fp32 weights + one low-precision copy + input and every layer's output, in both modes.

    The family counts its parameters and activations (a CNN's feature maps, a transformer's
    attention scores, a recurrent layer's gates at every step).
    """
    low_bytes = LOW_DTYPE_BYTES[config.dtype]
    fam = family(config)
    params = fam.parameter_count(config)
    activations = fam.activation_elements(config)
    return params * (4 + low_bytes) + activations * (4 + low_bytes) * 2


def estimate_training_peak_bytes(config: ExperimentConfig) -> int:
    """The quick bound of a training run (see estimate_peak_bytes): parameter copies,
    activations saved for backward and their gradients, and the task."""
    low_bytes = LOW_DTYPE_BYTES[config.dtype]
    fam = family(config)
    params = fam.parameter_count(config)
    activations = fam.activation_elements(config)
    saved = activations * (4 + low_bytes) * 4
    return params * (4 * parameter_copies(config) + low_bytes) + saved + task_bytes(config)


def parameter_copies(config: ExperimentConfig) -> int:
    """How many float32 copies of the parameters a training run of `config` holds at once."""
    return TRAINING_PARAMETER_COPIES.get(config.optimizer, max(TRAINING_PARAMETER_COPIES.values()))


def task_bytes(config: ExperimentConfig) -> int:
    """A training run's task: every batch's input, plus one label per row."""
    batches = TRAIN_POOL_BATCHES + HELD_OUT_BATCHES
    return batches * (family(config).input_elements(config) + config.batch) * 4


def memory_budget_bytes(config: ExperimentConfig) -> int:
    """The configured budget, or half of the RAM available right now."""
    if config.memory_budget_mb is not None:
        return int(config.memory_budget_mb * 2**20)
    return available_memory_bytes() // 2


def refuse_over_budget(config: ExperimentConfig, peak: int) -> None:
    """Raise GuardError("memory", …) when `peak` bytes exceed the memory budget."""
    budget = memory_budget_bytes(config)
    if peak > budget:
        raise GuardError(
            "memory",
            f"this model needs about {peak / 2**20:,.0f} MB but the budget is "
            f"{budget / 2**20:,.0f} MB; use a smaller model or batch",
        )


def check_memory_before_running(config: ExperimentConfig) -> int | None:
    """The quick bound checked against the budget, for input validation on the GUI thread.
    A user model's size is measured by running its code, which the run's own guards do on the
    worker after the trust question, so here it is skipped (None)."""
    if config.is_user_model:
        return None
    training = config.mode == "train"
    peak = (estimate_training_peak_bytes if training else estimate_peak_bytes)(config)
    refuse_over_budget(config, peak)
    return peak

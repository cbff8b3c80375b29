"""The user's own model as a family: `config.model` holds a spec (spec.py here).

The built-in families answer from formulas without torch; this one answers from a batch-1 probe
of the model itself (probe.py here), scaled by the batch: FLOPs, parameters, activations; the
guards trace its forward on fake tensors for its memory and time (shadow_run.py). So the
guards, sweeps, training, reports and compare run it unchanged.
Only `describe` and `validate` stay torch-free (the window validates while torch loads).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families.base import (
    IMAGE_SIDE,
    SEQUENCE_LENGTH,
    Family,
    Gemm,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    import torch

    from autocast_explorer.core.experiment.families.user.probe import ModelProbe
    from autocast_explorer.core.experiment.input_record import InputRecord

#: What a user model's FLOP count is (probe.py here).
PROBE_FLOPS_FORMULA = (
    "FLOPs = torch.utils.flop_counter.FlopCounterMode's count of the model's batch-1 forward "
    "× batch (matrix products and convolutions; elementwise ops not counted)"
)


class UserFamily(Family):
    name = "user"
    title = "Your model"
    #: None of the families' own: `seq` (a token model's length) is written beside the
    #: user-model fields instead, since it means nothing to an image model.
    params = ()
    uses = frozenset()
    sweeps = (IMAGE_SIDE, SEQUENCE_LENGTH)
    flops_formula = PROBE_FLOPS_FORMULA

    def validate(self, config: ExperimentConfig) -> None:
        super().validate(config)
        from autocast_explorer.core.experiment.families.user.spec import parse_spec
        from autocast_explorer.core.runtime.errors import ConfigError

        seq = config.seq
        if not isinstance(seq, int) or isinstance(seq, bool) or not 1 <= seq <= 1 << 20:
            raise ConfigError("seq", f"must be a whole number in 1 … {1 << 20} (got {seq!r})")
        parse_spec(config.model)

    def describe(self, config: ExperimentConfig) -> str:
        from autocast_explorer.core.experiment.families.user.spec import parse_spec

        args = " ".join(f"{k}={v}" for k, v in config.model_args)
        return parse_spec(config.model).short + (f" ({args})" if args else "")

    def probe(self, config: ExperimentConfig) -> ModelProbe:
        from autocast_explorer.core.experiment.families.user.probe import probe

        return probe(config)

    def gemms(self, config: ExperimentConfig) -> tuple[Gemm, ...]:
        """None listed: the FLOPs come from the probe, the time estimate from the traced ops."""
        return ()

    def flops(self, config: ExperimentConfig) -> int:
        return self.probe(config).flops * config.batch

    def parameter_count(self, config: ExperimentConfig) -> int:
        return self.probe(config).parameters

    def activation_elements(self, config: ExperimentConfig) -> int:
        return self.probe(config).activation_elements * config.batch

    def input_elements(self, config: ExperimentConfig) -> int:
        p = self.probe(config).plan
        count = config.batch
        for size in p.shape:
            count *= size
        return count

    def sizes_known(self, config: ExperimentConfig) -> bool:
        from autocast_explorer.core.experiment.families.user.probe import probed

        return probed(config) is not None

    def classes(self, config: ExperimentConfig) -> int:
        return self.probe(config).classes

    def sweep_config(self, config: ExperimentConfig, param: str, value: int) -> ExperimentConfig:
        if param == "image":
            return config.replace(input_image=value)
        return super().sweep_config(config, param, value)

    def build_model(self, config: ExperimentConfig) -> torch.nn.Module:
        from autocast_explorer.core.experiment.families.user.probe import build

        return build(config)[0]

    def build_input(self, config: ExperimentConfig) -> torch.Tensor:
        return self.probe(config).plan.draw(config, config.batch)

    def record_input(
        self, config: ExperimentConfig, model: torch.nn.Module, batches: Sequence[torch.Tensor]
    ) -> InputRecord:
        """As its plan fed it: by the argument's name, with any decoder input beside it."""
        from autocast_explorer.core.experiment.input_record import input_record

        plan = self.probe(config).plan
        companions = [plan.feed.companions(x) for x in batches]
        return input_record(plan.kind, plan.name, batches, companions)

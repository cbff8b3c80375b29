"""The tutorial's model: Linear layers with an activation between them (widths in the config)."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from autocast_explorer.core.data.errors import DataError
from autocast_explorer.core.experiment.config import (
    ExperimentConfig,
    flops_per_training_step,
    parameter_count,
)
from autocast_explorer.core.experiment.config_rules import MAX_WIDTH
from autocast_explorer.core.experiment.families.base import (
    ROWS_OF_FEATURES,
    Construction,
    Family,
    Gemm,
    SweptSize,
)
from autocast_explorer.core.runtime.errors import ConfigError

if TYPE_CHECKING:
    from autocast_explorer.core.data.dataset import Dataset

#: What an MLP's FLOP count covers (its Linear layers' products).
MLP_FLOPS_FORMULA = (
    "FLOPs = Σ over Linear layers of 2·B·in·out (bias adds and activations not counted)"
)


class MlpFamily(Family):
    name = "mlp"
    title = "MLP"
    uses = frozenset({"widths", "activation", "head"})
    #: Every hidden width at once (the input width and the classes stay).
    sweeps = (SweptSize("width", "hidden width", (64, 4096, 7)),)
    rows = ROWS_OF_FEATURES
    data_sets = "first width"
    flops_formula = MLP_FLOPS_FORMULA

    def describe(self, config: ExperimentConfig) -> str:
        return f"MLP {','.join(map(str, config.widths))}"

    def gemms(self, config: ExperimentConfig) -> tuple[Gemm, ...]:
        return tuple(
            Gemm("linear", config.batch, a, b) for a, b in itertools.pairwise(config.widths)
        )

    def parameter_count(self, config: ExperimentConfig) -> int:
        return parameter_count(config.widths)

    def activation_elements(self, config: ExperimentConfig) -> int:
        return config.batch * sum(config.widths)

    def input_elements(self, config: ExperimentConfig) -> int:
        return config.batch * config.widths[0]

    def training_step_flops(self, config: ExperimentConfig) -> int:
        """Exact: the first layer's input needs no gradient."""
        return flops_per_training_step(config.widths, config.batch)

    def classes(self, config: ExperimentConfig) -> int:
        return config.widths[-1]

    def fit_data(self, config: ExperimentConfig, dataset: Dataset) -> ExperimentConfig:
        """The first width is the features of a row, the last the classes."""
        if dataset.features > MAX_WIDTH:
            raise DataError(
                f"x: rows of {dataset.features:,} values are more than the MLP takes "
                f"(at most {MAX_WIDTH:,} inputs)"
            )
        return config.replace(widths=(dataset.features, *config.widths[1:-1], dataset.classes))

    def sweep_config(self, config: ExperimentConfig, param: str, value: int) -> ExperimentConfig:
        """A width sweep sets every hidden width at once; input width and classes stay."""
        if param != "width":
            return super().sweep_config(config, param, value)
        if len(config.widths) < 3:
            raise ConfigError(
                "widths", "a width sweep needs at least one hidden layer (3 or more widths)"
            )
        hidden = (value,) * (len(config.widths) - 2)
        return config.replace(widths=(config.widths[0], *hidden, config.widths[-1]))

    def construction(self) -> Construction:
        from autocast_explorer.core.experiment.families.construct import mlp

        return Construction(mlp.mlp_model, mlp.mlp_input)

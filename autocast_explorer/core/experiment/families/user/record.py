"""What a run of a user model keeps: the layer rows at the chosen depth and its ModelInfo."""

from __future__ import annotations

from collections.abc import Sequence

from autocast_explorer.core.experiment.capture import LayerRecord
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families.user.depth import default_depth, shown_names
from autocast_explorer.core.experiment.families.user.info import ModelInfo
from autocast_explorer.core.experiment.families.user.probe import probe


def no_argmax_reason(config: ExperimentConfig) -> str:
    """Why agreement has no argmax for `config`'s model ('' for built-in families, classifiers)."""
    return probe(config).no_argmax_reason if config.is_user_model else ""


def user_rows(
    config: ExperimentConfig, layers: Sequence[LayerRecord]
) -> tuple[tuple[LayerRecord, ...], ModelInfo]:
    """The rows at --layer-depth (default: ≤ 40 rows) and the model's record for the result."""
    names = [layer.name for layer in layers]
    at = config.layer_depth or default_depth(names)
    shown = shown_names(names, at)
    p = probe(config)
    info = ModelInfo(
        spec=config.model,
        class_name=p.class_name,
        parameters=p.parameters,
        sha256=p.sha256,
        input_shape=p.plan.shape,
        input_kind=p.plan.kind,
        output_shape=(config.batch, *p.output_shape[1:]),
        layer_depth=at,
        modules=len(names),
        no_argmax_reason=p.no_argmax_reason,
    )
    return tuple(layer for layer in layers if layer.name in shown), info

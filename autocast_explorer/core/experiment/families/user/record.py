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
    shown, info = rows_at_depth(config, [layer.name for layer in layers])
    return tuple(layer for layer in layers if layer.name in shown), info


def rows_at_depth(config: ExperimentConfig, names: Sequence[str]) -> tuple[set[str], ModelInfo]:
    """Which of `names` (modules, in call order) are rows at --layer-depth (default: the
    deepest depth with ≤ 40 rows), and the model's record for the result."""
    at = config.layer_depth or default_depth(names)
    p = probe(config)
    info = ModelInfo(
        spec=config.model,
        class_name=p.class_name,
        parameters=p.parameters,
        sha256=p.sha256,
        input_shape=p.plan.shape,
        input_kind="tokens" if p.plan.kind == "tokens" else "float",
        output_shape=(config.batch, *p.output_shape[1:]),
        layer_depth=at,
        modules=len(names),
        no_argmax_reason=p.no_argmax_reason,
    )
    return shown_names(names, at), info

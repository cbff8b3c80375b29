"""What a plan is made for: the config's model (trained first on real data), the batch its
candidates are timed on, the rows their answers are judged on, and the layer rows.

The rows are the layers at the depth the Layers tab shows a model of yours at (its
--layer-depth, else the deepest depth with at most 40 rows; families/user/depth.py); the
built-in families' layers are all at one depth already, so the same rule gives their layers.
Rows never nest, so a row's time share and a keep-set's layers add up.

The config's own `keep_float32` patterns are resolved to module paths here (`kept`): the user's
keep-set, which every lower-precision candidate keeps and the search only adds to. A pattern
that names no layer is refused as a run refuses it (ConfigError naming `keep_float32`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch

from autocast_explorer.core.experiment.capture import record_forward
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.data_run import fitted, prepare
from autocast_explorer.core.experiment.families.user.depth import default_depth, shown_names
from autocast_explorer.core.experiment.families.user.guard import user_phase
from autocast_explorer.core.experiment.families.user.record import rows_at_depth
from autocast_explorer.core.experiment.interventions import kept_layers
from autocast_explorer.core.experiment.layer_patterns import within
from autocast_explorer.core.experiment.model import build
from autocast_explorer.core.runtime.progress import Reporter

#: One forward of a candidate: an input batch in, the model's output out.
ForwardFn = Callable[[torch.Tensor], object]


@dataclass
class Subject:
    """A built model and its inputs: `x` is timed, `chunks` are judged (held-out rows cut into
    batches of `x`'s size, the last one padded by wrapping around: one shape for a compiled
    forward), `rows` of them real (the rest padding); `labels` on real data; `kept`: the module
    paths the config's `keep_float32` names (kept in every lower-precision candidate)."""

    config: ExperimentConfig
    model: torch.nn.Module
    x: torch.Tensor
    chunks: tuple[torch.Tensor, ...]
    rows: int
    labels: np.ndarray | None
    layers: tuple[str, ...]
    kept: tuple[str, ...] = ()

    @property
    def free_layers(self) -> tuple[str, ...]:
        """The layer rows the search may still keep: those not inside the user's keep-set."""
        return tuple(row for row in self.layers if not within(row, self.kept))

    def outputs(self, forward: ForwardFn) -> list[object]:
        """`forward` of every judged chunk, in order."""
        return [forward(chunk) for chunk in self.chunks]


def _chunks(rows: np.ndarray, shape: tuple[int, ...], batch: int) -> Iterator[torch.Tensor]:
    count = rows.shape[0]
    for start in range(0, count, batch):
        picks = np.arange(start, start + batch) % count
        chunk = np.ascontiguousarray(rows[picks])
        yield torch.from_numpy(chunk).reshape(-1, *shape)


def layer_rows(
    config: ExperimentConfig, model: torch.nn.Module, x: torch.Tensor
) -> tuple[str, ...]:
    """The modules one float32 forward called, cut at the Layers tab's depth, in call order."""
    capture = record_forward(model, x, None)
    if capture.raised is not None:
        raise capture.raised  # float32 failing is no finding: there is nothing to plan
    names = list(dict.fromkeys(layer.name for layer in capture.layers))
    if config.is_user_model:
        shown, _info = rows_at_depth(config, names)
    else:
        shown = shown_names(names, default_depth(names))
    return tuple(name for name in names if name in shown)


def prepare_subject(config: ExperimentConfig, reporter: Reporter) -> Subject:
    """Build (and on real data train) the config's model as a run does, under no_grad."""
    if config.data == "synthetic":
        reporter.report(0.0, "building the model")
        with user_phase(config, "building the model"):
            model, x = build(config)
        labels, rows = None, x.shape[0]
        chunks: tuple[torch.Tensor, ...] = (x,)
    else:
        reporter.report(0.0, f"reading the data ({config.data})")
        config, dataset = fitted(config)
        prepared = prepare(config, dataset, reporter.span(0.0, 0.9))
        model, x = prepared.model, prepared.x
        assert prepared.held_out is not None
        held_x, labels = prepared.held_out
        chunks = tuple(_chunks(held_x, prepared.row_shape, x.shape[0]))
        rows = held_x.shape[0]
    kept = kept_layers(model, config.keep_float32) if config.keep_float32 else ()
    reporter.report(0.95, "finding the layer rows")
    with user_phase(config, "the float32 forward"):
        layers = layer_rows(config, model, x)
    reporter.check()
    return Subject(config, model, x, chunks, rows, labels, layers, kept)

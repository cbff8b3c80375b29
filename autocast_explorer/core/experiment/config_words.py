"""A config in words, for one-line headers: no torch, so the window can say it before torch loads
(the stale mark beside the first paint)."""

from __future__ import annotations

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families import family


def model_options(cfg: ExperimentConfig) -> str:
    """' · relu · head none': the shared options the config's model uses (none for your own)."""
    uses = family(cfg).uses
    activation = f" · {cfg.activation}" if "activation" in uses else ""
    return activation + (f" · head {cfg.head}" if "head" in uses else "")


def kept_clause(cfg: ExperimentConfig) -> str:
    """' · kept in float32: fc2, LayerNorm': the layer patterns the config keeps ('' for none)."""
    return f" · kept in float32: {', '.join(cfg.keep_float32)}" if cfg.keep_float32 else ""


def config_line(cfg: ExperimentConfig) -> str:
    """'GRU 32→64 · … · batch 16 · relu · autocast bfloat16 · training 50 steps': what a result
    was measured with, in one line (the window's "result is for …" mark names it)."""
    mode = f" · training {cfg.steps} steps" if cfg.mode == "train" else ""
    return (
        f"{cfg.title} · batch {cfg.batch}{model_options(cfg)} · autocast {cfg.dtype}"
        f"{kept_clause(cfg)}{mode}"
    )

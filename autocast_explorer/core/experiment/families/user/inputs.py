"""The input a run feeds a user model: what the model states (stated.py here) under the user's
--input-shape / --input-kind / --vocab / --seq / --image, and how each batch reaches it.

Token ids are drawn below --vocab, else the vocabulary the model states; a token model that
states none is refused in one line asking for --vocab (an example's largest id says nothing
of the vocabulary). Every path calls the model with one tensor; a Hugging Face model is
handed it by its argument's name, and an encoder-decoder its decoder input beside it (`Feed`,
which the output adapter in loader.py applies), so capture, tracing, routes, training and
reproduce.py all run the whole model unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families.user.errors import UserModelError
from autocast_explorer.core.experiment.families.user.loader import FEED_ATTRIBUTE, Loaded
from autocast_explorer.core.experiment.families.user.stated import StatedInput
from autocast_explorer.core.experiment.input_kind import InputKind


@dataclass(frozen=True)
class Feed:
    """How one batch `x` reaches the model: as its argument `name` (positionally when
    `by_name` is False: a factory's model), with `decoder_ids` (one sample's) beside it."""

    name: str
    by_name: bool = False
    decoder_ids: torch.Tensor | None = field(default=None, compare=False)

    def companions(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """What is fed beside `x`: an encoder-decoder's decoder_input_ids, one row per row."""
        if self.decoder_ids is None:
            return {}
        return {"decoder_input_ids": self.decoder_ids.expand(x.shape[0], -1)}

    def arguments(self, x: torch.Tensor) -> tuple[tuple[torch.Tensor, ...], dict[str, object]]:
        if not self.by_name:
            return (x,), {}
        return (), {self.name: x, **self.companions(x)}


@dataclass(frozen=True)
class InputPlan:
    """One input sample: its shape (no batch dimension), kind and argument, `vocab` for token
    ids, and how a batch is fed."""

    shape: tuple[int, ...]
    kind: InputKind
    vocab: int | None = None
    feed: Feed = field(default_factory=lambda: Feed("x"))

    @property
    def name(self) -> str:
        return self.feed.name

    def draw(self, config: ExperimentConfig, batch: int) -> torch.Tensor:
        """A batch from torch's RNG: token ids below `vocab`, or the config's distribution."""
        if self.kind == "tokens":
            assert self.vocab is not None  # input_plan refuses tokens without one
            return torch.randint(0, self.vocab, (batch, *self.shape))
        from autocast_explorer.core.experiment.families.construct.common import draw_input

        return draw_input(config.to_dict(), (batch, *self.shape))


def _kind(config: ExperimentConfig, stated: StatedInput) -> InputKind:
    """--input-kind over the model's own: a float the model states keeps its meaning (pixels,
    audio, features)."""
    if config.input_kind == "tokens":
        return "tokens"
    if config.input_kind == "float":
        return "float" if stated.kind in (None, "tokens") else stated.kind
    return stated.kind or "float"


def _shape(config: ExperimentConfig, loaded: Loaded, kind: InputKind) -> tuple[int, ...]:
    """--input-shape, else the factory's example, else --seq token ids, else the size the
    model states."""
    stated = loaded.stated
    if config.input_shape is not None:
        return tuple(config.input_shape)
    if loaded.example is not None:
        return tuple(int(s) for s in loaded.example.shape[1:])
    if kind == "tokens":
        return (config.seq,)
    if stated.shape is not None:
        return stated.shape
    if kind == "audio" and stated.convolutions:
        return (stated.audio_samples(config.seq),)
    taken = f" (its {stated.name})" if stated.by_name else ""
    raise UserModelError(
        config.model,
        f"the model states no input size{taken}: give --input-shape (per sample, e.g. 3,64,64)",
    )


def input_plan(config: ExperimentConfig, loaded: Loaded) -> InputPlan:
    """The input: --input-shape / --input-kind / --vocab / --seq / --image over what the model
    states (stated.py); UserModelError for token ids without a vocabulary."""
    stated = loaded.stated
    kind = _kind(config, stated)
    shape = _shape(config, loaded, kind)
    if config.input_image is not None:
        if len(shape) < 2:
            raise UserModelError(
                config.model, f"--image needs an input of ≥ 2 dimensions (it is {shape})"
            )
        shape = (*shape[:-2], config.input_image, config.input_image)
    vocab = None
    if kind == "tokens":
        vocab = config.vocab or stated.vocab
        if vocab is None:
            raise UserModelError(
                config.model,
                "the model takes token ids but states no vocabulary (no vocab_size attribute, "
                "no nn.Embedding): give --vocab N (ids are drawn below N)",
            )
    return InputPlan(tuple(int(s) for s in shape), kind, vocab, _feed(config, stated))


def _feed(config: ExperimentConfig, stated: StatedInput) -> Feed:
    """A library model is handed its input by name; an encoder-decoder's decoder gets --seq
    ids (at most its stated length) starting with its start token, drawn once from the seed's
    own stream (the model's and the input's draws stay as they were)."""
    decoder = stated.decoder
    if decoder is None:
        return Feed(stated.name, by_name=stated.by_name)
    length = min(config.seq, decoder.max_length or config.seq)
    ids = torch.randint(
        0, decoder.vocab, (length,), generator=torch.Generator().manual_seed(config.seed)
    )
    ids[0] = decoder.start
    return Feed(stated.name, by_name=True, decoder_ids=ids)


def feed(module: torch.nn.Module, plan: InputPlan) -> torch.nn.Module:
    """`module` called with one batch hands it on as `plan` says (loader.adapt_output)."""
    module.__dict__[FEED_ATTRIBUTE] = plan.feed
    return module

"""What a model says it takes, read from the model itself (never from an example's values).

A Hugging Face model names its input (`main_input_name`) and its config sizes it: token ids
below `vocab_size`; pixels of `num_channels` × `image_size`²; raw audio (`input_values`) as
long as its convolutional feature encoder needs for `--seq` frames (`conv_kernel`,
`conv_stride`); Whisper-like log-mel `input_features` of `num_mel_bins` ×
2·`max_source_positions` frames, the length its encoder requires. An encoder-decoder model
(`is_encoder_decoder`) is also fed `decoder_input_ids` starting with its
`decoder_start_token_id`, so its decoder runs too. A model that takes text and images at once
(CLIP) is refused in one line naming the towers that run alone. A factory's model states its
vocabulary by a `vocab_size` attribute or its first nn.Embedding's `num_embeddings`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from autocast_explorer.core.experiment.families.user.errors import UserModelError
from autocast_explorer.core.experiment.input_kind import InputKind
from autocast_explorer.core.experiment.input_record import first_argument

#: What each Hugging Face input argument holds.
HF_INPUT_KINDS: dict[str, InputKind] = {
    "input_ids": "tokens",
    "pixel_values": "pixels",
    "input_values": "audio",
    "input_features": "features",
}
#: An image model's side when its config states none.
DEFAULT_IMAGE_SIDE = 224
#: The sub-configs of a model that takes two kinds of input at once, and what each takes.
_TOWERS = {"text_config": "token ids", "vision_config": "images", "audio_config": "audio"}


@dataclass(frozen=True)
class DecoderStart:
    """An encoder-decoder model's decoder input: ids below `vocab` that start with `start`, at
    most `max_length` long (None: no limit stated)."""

    start: int
    vocab: int
    max_length: int | None = None


@dataclass(frozen=True)
class StatedInput:
    """What a model takes: the argument's `name` and `kind`, one sample's `shape` (None: sized
    by --seq, or not stated), the token `vocab`, the audio encoder's (kernel, stride) per
    convolution, and an encoder-decoder's decoder input."""

    name: str
    kind: InputKind | None = None  # None: a factory without an example (float, or --input-kind)
    shape: tuple[int, ...] | None = None
    vocab: int | None = None
    convolutions: tuple[tuple[int, int], ...] = ()
    decoder: DecoderStart | None = None
    #: Handed its input by `name` (a library's model), not positionally (a factory's).
    by_name: bool = False

    def audio_samples(self, frames: int) -> int:
        """The fewest samples the convolutions turn into `frames` frames."""
        length = frames
        for kernel, stride in reversed(self.convolutions):
            length = (length - 1) * stride + kernel
        return length


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def vocab_of(module: torch.nn.Module) -> int | None:
    """A model's vocabulary: its `vocab_size` attribute, else its first nn.Embedding's (or
    EmbeddingBag's) `num_embeddings`; None when it states neither."""
    stated = _whole(getattr(module, "vocab_size", None))
    if stated is not None:
        return stated
    for sub in module.modules():
        if isinstance(sub, torch.nn.Embedding | torch.nn.EmbeddingBag):
            return int(sub.num_embeddings)
    return None


def factory_stated(module: torch.nn.Module, example: torch.Tensor | None) -> StatedInput:
    """A factory's model: its forward's first argument, the example's kind, and the vocabulary
    the model states (never the example's largest id)."""
    kind: InputKind | None = None
    if example is not None:
        kind = "float" if example.is_floating_point() else "tokens"
    return StatedInput(first_argument(module), kind, vocab=vocab_of(module))


def hf_stated(config: Any, model: torch.nn.Module) -> StatedInput:
    """What a Hugging Face model built from `config` takes (see the module's docstring)."""
    name = str(getattr(model, "main_input_name", "input_ids"))
    kind = HF_INPUT_KINDS.get(name)
    shape: tuple[int, ...] | None = None
    if kind == "pixels":
        channels = _whole(getattr(config, "num_channels", None)) or 3
        shape = (channels, *_image_sides(config))
    elif kind == "features":
        mels = _whole(getattr(config, "num_mel_bins", None))
        positions = _whole(getattr(config, "max_source_positions", None))
        shape = (mels, 2 * positions) if mels and positions else None
    vocab = _whole(getattr(config, "vocab_size", None))
    return StatedInput(
        name,
        kind,
        shape,
        vocab,
        _convolutions(config) if kind == "audio" else (),
        _decoder(config, vocab),
        by_name=True,
    )


def _image_sides(config: Any) -> tuple[int, int]:
    size = getattr(config, "image_size", None)
    if isinstance(size, list | tuple) and len(size) == 2 and all(_whole(s) for s in size):
        return int(size[0]), int(size[1])
    side = _whole(size) or DEFAULT_IMAGE_SIDE
    return side, side


def _convolutions(config: Any) -> tuple[tuple[int, int], ...]:
    kernels = getattr(config, "conv_kernel", None)
    strides = getattr(config, "conv_stride", None)
    if not isinstance(kernels, list | tuple) or not isinstance(strides, list | tuple):
        return ()
    pairs = tuple(zip(kernels, strides, strict=False))
    ok = len(kernels) == len(strides) and all(_whole(k) and _whole(s) for k, s in pairs)
    return tuple((int(k), int(s)) for k, s in pairs) if ok else ()


def _decoder(config: Any, vocab: int | None) -> DecoderStart | None:
    """An encoder-decoder's decoder input: decoder_start_token_id (else the pad, else the bos
    token, else 0: T5 starts with its pad token), at most its stated target length."""
    if not getattr(config, "is_encoder_decoder", False) or vocab is None:
        return None
    start = next(
        (
            value
            for key in ("decoder_start_token_id", "pad_token_id", "bos_token_id")
            if isinstance(value := getattr(config, key, None), int) and 0 <= value < vocab
        ),
        0,
    )
    longest = _whole(getattr(config, "max_target_positions", None)) or _whole(
        getattr(config, "max_position_embeddings", None)
    )
    return DecoderStart(start, vocab, longest)


def refuse_two_towers(spec: str, config: Any, known_types: Any) -> None:
    """UserModelError for a model that takes token ids and images in one call (CLIP), naming
    the towers that run alone (`known_types`: transformers' model types)."""
    towers = [key for key in _TOWERS if getattr(config, key, None) is not None]
    if len(towers) < 2:
        return
    takes = " and ".join(_TOWERS[key] for key in towers)
    alone = [
        f"hf:{kind}"
        for key in towers
        if isinstance(kind := getattr(getattr(config, key), "model_type", None), str)
        and kind in known_types
    ]
    run = (
        f"run one tower alone: {' or '.join(alone)}"
        if alone
        else "give a factory (file.py:build) that calls it with both"
    )
    raise UserModelError(spec, f"it takes {takes} in one call, which a run cannot feed; {run}")

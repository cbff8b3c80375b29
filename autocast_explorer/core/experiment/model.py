"""Builds the MLP and its input exactly as the tutorial's closing example does.

Order matters for bit-identical results: seed, build the layers in order, eval(), then draw x.
"""

from __future__ import annotations

from collections import OrderedDict

import torch

from autocast_explorer.core.experiment.config import ExperimentConfig

TORCH_DTYPES: dict[str, torch.dtype] = {
    "float32": torch.float32,
    "bfloat16": torch.bfloat16,
    "float16": torch.float16,
}


def dtype_name(dtype: torch.dtype) -> str:
    """'torch.bfloat16' -> 'bfloat16' (the spelling used in JSON and on screen)."""
    return str(dtype).removeprefix("torch.")


def low_precision_dtype(config: ExperimentConfig) -> torch.dtype:
    return TORCH_DTYPES[config.dtype]


def _activation(name: str) -> torch.nn.Module | None:
    return {
        "relu": torch.nn.ReLU,
        "gelu": torch.nn.GELU,
        "tanh": torch.nn.Tanh,
        "sigmoid": torch.nn.Sigmoid,
    }.get(name, lambda: None)()


def build_mlp(config: ExperimentConfig) -> torch.nn.Sequential:
    """Seed, then Linear/activation pairs in order, an optional head; returned in eval mode.

    Layers are named fc1, relu1, fc2 … so tables and charts read naturally; the names do not
    change the parameters, which come from the RNG in construction order as in the tutorial.
    """
    torch.manual_seed(config.seed)
    layers: OrderedDict[str, torch.nn.Module] = OrderedDict()
    pairs = list(zip(config.widths, config.widths[1:], strict=False))
    for index, (fan_in, fan_out) in enumerate(pairs, start=1):
        layers[f"fc{index}"] = torch.nn.Linear(fan_in, fan_out)
        if index < len(pairs):
            act = _activation(config.activation)
            if act is not None:
                layers[f"{config.activation}{index}"] = act
    if config.head == "softmax":
        layers["softmax"] = torch.nn.Softmax(dim=1)
    elif config.head == "log_softmax":
        layers["log_softmax"] = torch.nn.LogSoftmax(dim=1)
    model = torch.nn.Sequential(layers)
    model.eval()
    return model


def build_mlp_input(config: ExperimentConfig) -> torch.Tensor:
    """Draw x after the model, from the same RNG stream, as the tutorial does.

    The default (normal, scale 1) is exactly `torch.randn(batch, widths[0])`.
    """
    shape = (config.batch, config.widths[0])
    if config.input_distribution == "uniform":
        x = torch.rand(shape) * 2.0 - 1.0
    else:
        x = torch.randn(shape)
    if config.input_scale != 1.0:
        x = x * config.input_scale
    return x


def build_model(config: ExperimentConfig) -> torch.nn.Module:
    """The config's model, whatever its family (seeded; in the mode it is measured in)."""
    from autocast_explorer.core.experiment.families import family

    return family(config).build_model(config)


def build_input(config: ExperimentConfig) -> torch.Tensor:
    """The config's input, shaped for its family, drawn from the RNG stream as it stands."""
    from autocast_explorer.core.experiment.families import family

    return family(config).build_input(config)


def build(config: ExperimentConfig) -> tuple[torch.nn.Module, torch.Tensor]:
    """The config's model (any family), then its input, in the tutorial's order."""
    model = build_model(config)
    return model, build_input(config)

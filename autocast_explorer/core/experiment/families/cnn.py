"""A small CNN: stages of Conv2d 3×3 → BatchNorm2d → activation → MaxPool2d 2, then global
average pooling and a Linear classifier.

Flat module names (conv1, bn1, relu1, pool1, …, gap, flatten, fc) keep the layer table and
charts readable; BatchNorm uses its initial running statistics in eval mode, as a freshly
built network does.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from autocast_explorer.core.data.errors import DataError
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.config_rules import MAX_CHANNELS
from autocast_explorer.core.experiment.families.base import (
    IMAGE_SIDE,
    ROWS_OF_IMAGES,
    Construction,
    Family,
    FamilyParam,
    Gemm,
    SweptSize,
)
from autocast_explorer.core.runtime.errors import ConfigError

if TYPE_CHECKING:
    from autocast_explorer.core.data.dataset import Dataset


def stage_sides(config: ExperimentConfig) -> list[int]:
    """The square side each stage's convolution sees (halved by every pooling)."""
    sides = []
    side = config.image
    for _ in range(len(config.channels) - 1):
        sides.append(side)
        side //= 2
    return sides


class CnnFamily(Family):
    name = "cnn"
    title = "CNN"
    params = (
        FamilyParam("channels"),
        FamilyParam("image"),
        FamilyParam("classes"),
    )
    sweeps = (SweptSize("channels", "stage channels", (8, 256, 6)), IMAGE_SIDE)
    rows = ROWS_OF_IMAGES
    data_sets = "channels[0] and image side"
    input_kind = "pixels"

    def validate(self, config: ExperimentConfig) -> None:
        super().validate(config)
        stages = len(config.channels) - 1
        if config.image < 2**stages:
            raise ConfigError(
                "image",
                f"{config.image} px is too small for {stages} pooling stages "
                f"(each halves the side): use at least {2**stages}",
            )

    def fit_data(self, config: ExperimentConfig, dataset: Dataset) -> ExperimentConfig:
        """The input channels and image side are the rows' (C, H, W): square images, at least
        one pixel left after every pooling stage."""
        shape = dataset.row_shape
        if not dataset.image:
            raise DataError(
                f"x: rows of shape {shape} are not images; the CNN takes x of shape "
                "(rows, C, H, W) or (rows, H, W)"
            )
        channels, height, width = shape
        if channels > MAX_CHANNELS:
            raise DataError(
                f"x: images of {channels:,} channels are more than the CNN takes "
                f"(at most {MAX_CHANNELS:,})"
            )
        if height != width:
            raise DataError(f"x: the CNN takes square images, got {height}×{width}")
        stages = len(config.channels) - 1
        if height < 2**stages:
            raise DataError(
                f"x: {height}×{width} images are too small for {stages} pooling stages "
                f"(each halves the side); use --channels with at most "
                f"{max(1, int(math.log2(height)))} stages"
            )
        return config.replace(
            channels=(channels, *config.channels[1:]), image=height, classes=dataset.classes
        )

    def describe(self, config: ExperimentConfig) -> str:
        return (
            f"CNN {'→'.join(map(str, config.channels))} · image {config.image} · "
            f"{config.classes} classes"
        )

    def forecast_from_trace(self, config: ExperimentConfig) -> bool:
        """Convolutions run their own kernels (on AVX2 CPUs bfloat16 ones ATen's slow path,
        ~1 GFLOP/s), and batch norm and pooling between them move every activation."""
        return True

    def gemms(self, config: ExperimentConfig) -> tuple[Gemm, ...]:
        out = []
        pairs = zip(config.channels, config.channels[1:], strict=False)
        for (c_in, c_out), side in zip(pairs, stage_sides(config), strict=True):
            out.append(Gemm("conv3x3", config.batch * side * side, c_in * 9, c_out))
        out.append(Gemm("linear", config.batch, config.channels[-1], config.classes))
        return tuple(out)

    def parameter_count(self, config: ExperimentConfig) -> int:
        total = 0
        for c_in, c_out in zip(config.channels, config.channels[1:], strict=False):
            total += c_in * c_out * 9 + c_out + 2 * c_out  # conv weight + bias, bn weight + bias
        return total + config.channels[-1] * config.classes + config.classes

    def activation_elements(self, config: ExperimentConfig) -> int:
        total = self.input_elements(config)
        for c_out, side in zip(config.channels[1:], stage_sides(config), strict=True):
            total += (
                3 * config.batch * c_out * side * side + config.batch * c_out * (side // 2) ** 2
            )
        return total + config.batch * (2 * config.channels[-1] + 2 * config.classes)

    def input_elements(self, config: ExperimentConfig) -> int:
        return config.batch * config.channels[0] * config.image**2

    def sweep_config(self, config: ExperimentConfig, param: str, value: int) -> ExperimentConfig:
        """A channels sweep sets every stage's channels at once (the input channels stay)."""
        if param == "channels":
            stages = len(config.channels) - 1
            return config.replace(channels=(config.channels[0], *(value,) * stages))
        return super().sweep_config(config, param, value)

    def construction(self) -> Construction:
        from autocast_explorer.core.experiment.families.construct import cnn

        return Construction(cnn.cnn_model, cnn.cnn_input)

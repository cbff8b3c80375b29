"""What a run on real data records about its data: the result JSON's `data` object and the
float32 training's history (torch-free, so reports and the window read them without torch)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

from autocast_explorer.core.documents.field_types import (
    Flag,
    Fraction,
    NullableNumber,
    PositiveWhole,
    PositiveWholes,
    Text,
    Whole,
)
from autocast_explorer.core.documents.model import Part, build


class EpochRecordPart(Part):
    epoch: PositiveWhole
    loss: Annotated[NullableNumber, Field(description="mean training loss")]
    accuracy: Annotated[Fraction, Field(description="float32 held-out accuracy after the epoch")]


class DataPart(Part):
    """real data: what the model was fitted to and evaluated on"""

    name: Annotated[Text, Field(description="digits, or the data file's name")]
    n_train: Annotated[Whole, Field(description="rows trained on (0 with a checkpoint)")]
    n_test: Annotated[Whole, Field(description="held-out rows evaluated")]
    classes: Whole = 0
    shape: Annotated[PositiveWholes, Field(description="one row's shape, e.g. [1, 8, 8]")] = ()
    image: Annotated[Flag, Field(description="rows are images (C, H, W)")] = False
    epochs: Annotated[Whole, Field(description="float32 training epochs (0 with a checkpoint)")] = 0
    checkpoint: Annotated[
        Text, Field(description="the weights file's name, '' when trained here")
    ] = ""
    history: tuple[EpochRecordPart, ...] = Field(default=())


@dataclass(frozen=True)
class EpochRecord:
    """One epoch of float32 training: mean training loss and held-out accuracy after it."""

    epoch: int
    loss: float
    accuracy: float

    def to_part(self) -> EpochRecordPart:
        return build(EpochRecordPart, epoch=self.epoch, loss=self.loss, accuracy=self.accuracy)


@dataclass(frozen=True)
class DataInfo:
    """What the model was fitted to and evaluated on: the result JSON's `data` object.

    With a checkpoint nothing is trained (`n_train` 0, `epochs` 0) and every row is held out.
    `shape` is one row's shape ([1, 8, 8] for the digits); `image` says whether it is drawable.
    """

    name: str
    n_train: int
    n_test: int
    classes: int
    shape: tuple[int, ...]
    image: bool
    epochs: int
    checkpoint: str = ""
    history: tuple[EpochRecord, ...] = ()

    def to_part(self) -> DataPart:
        return build(
            DataPart,
            name=self.name,
            n_train=self.n_train,
            n_test=self.n_test,
            classes=self.classes,
            shape=self.shape,
            image=self.image,
            epochs=self.epochs,
            checkpoint=self.checkpoint,
            history=tuple(h.to_part() for h in self.history),
        )

    @classmethod
    def from_part(cls, part: DataPart) -> DataInfo:
        return cls(
            name=part.name,
            n_train=part.n_train,
            n_test=part.n_test,
            classes=part.classes,
            shape=tuple(part.shape),
            image=part.image,
            epochs=part.epochs,
            checkpoint=part.checkpoint,
            history=tuple(
                EpochRecord(h.epoch, h.loss if h.loss is not None else math.nan, h.accuracy)
                for h in part.history
            ),
        )

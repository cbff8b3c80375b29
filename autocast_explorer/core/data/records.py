"""What a run on real data records about its data: the result JSON's `data` object and the
float32 training's history (torch-free, so reports and the window read them without torch)."""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field

from autocast_explorer.core.documents.field_types import (
    Flag,
    Fraction,
    Measured,
    PositiveWhole,
    PositiveWholes,
    Text,
    Whole,
)
from autocast_explorer.core.documents.model import Part


class EpochRecord(Part):
    """One epoch of float32 training: mean training loss and held-out accuracy after it."""

    epoch: PositiveWhole
    #: NaN when the loss was not finite (written as null).
    loss: Annotated[Measured, Field(description="mean training loss")]
    accuracy: Annotated[Fraction, Field(description="float32 held-out accuracy after the epoch")]


class DataInfo(Part):
    """real data: what the model was fitted to and evaluated on"""

    # The result JSON's `data` object. With a checkpoint nothing is trained (`n_train` 0,
    # `epochs` 0) and every row is held out. `shape` is one row's shape ([1, 8, 8] for the
    # digits); `image` says whether it is drawable.
    schema_name: ClassVar[str] = "data"

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
    history: tuple[EpochRecord, ...] = Field(default=())

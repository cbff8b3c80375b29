"""What a run on real data records about its data: the result JSON's `data` object and the
float32 training's history (torch-free, so reports and the window read them without torch)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autocast_explorer.core.documents.reader import JsonReader, integer


@dataclass(frozen=True)
class EpochRecord:
    """One epoch of float32 training: mean training loss and held-out accuracy after it."""

    epoch: int
    loss: float
    accuracy: float

    def to_dict(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "loss": self.loss, "accuracy": self.accuracy}


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

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "n_train": self.n_train,
            "n_test": self.n_test,
            "classes": self.classes,
            "shape": list(self.shape),
            "image": self.image,
            "epochs": self.epochs,
            "checkpoint": self.checkpoint,
            "history": [h.to_dict() for h in self.history],
        }

    @classmethod
    def from_reader(cls, r: JsonReader) -> DataInfo:
        return cls(
            name=r.text("name"),
            n_train=integer(r, "n_train", minimum=0),
            n_test=integer(r, "n_test", minimum=0),
            classes=integer(r, "classes", minimum=0) if "classes" in r.data else 0,
            shape=tuple(r.wholes("shape", required=False, minimum=1)),
            image=r.boolean("image") if "image" in r.data else False,
            epochs=integer(r, "epochs", minimum=0) if "epochs" in r.data else 0,
            checkpoint=r.text("checkpoint", default=""),
            history=tuple(
                EpochRecord(
                    epoch=integer(h, "epoch", minimum=1),
                    loss=h.number("loss", nullable=True) or 0.0,
                    accuracy=h.number("accuracy", minimum=0),
                )
                for h in r.objects("history", required=False)
            ),
        )

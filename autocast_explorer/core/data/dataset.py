"""A labelled data set (the bundled digits or a user's file), checked once, and its seeded split.

Every refusal is a DataError (data/errors.py): one line naming the array and the rule.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autocast_explorer.core.data.errors import DataError
from autocast_explorer.core.data.files import read_arrays
from autocast_explorer.core.documents.resources import resources_dir

#: The share of rows held out for evaluation, and the stream the split is drawn from.
TEST_FRACTION = 0.25
SPLIT_SEED_OFFSET = 104729


@dataclass(frozen=True)
class Dataset:
    """Rows `x` (N, *row shape) in float32 and labels `y` (N,) in 0 … classes−1.

    `image` is true when a row is (C, H, W); `scale` divides x before the model sees it (the
    digits' pixels run 0 … 16); `name` is what reports show ("digits" or the file's name).
    """

    name: str
    x: np.ndarray
    y: np.ndarray
    classes: int
    image: bool
    scale: float = 1.0

    @property
    def rows(self) -> int:
        return int(self.y.shape[0])

    @property
    def row_shape(self) -> tuple[int, ...]:
        return tuple(int(d) for d in self.x.shape[1:])

    @property
    def features(self) -> int:
        return int(np.prod(self.row_shape))


@dataclass(frozen=True)
class Split:
    """Row indices into the data set: trained on, and held out for evaluation."""

    train: np.ndarray
    test: np.ndarray


def digits_path() -> Path:
    """The bundled UCI digits (resources/data/digits.csv.gz; licence and citation beside it)."""
    return resources_dir() / "data" / "digits.csv.gz"


def load_digits() -> Dataset:
    """1,797 images of 8×8 pixels (values 0 … 16) of the digits 0 … 9."""
    with gzip.open(digits_path(), "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    x = table[:, :-1].reshape(-1, 1, 8, 8)
    y = table[:, -1].astype(np.int64)
    return Dataset(name="digits", x=x, y=y, classes=10, image=True, scale=16.0)


def load_dataset(spec: str, budget_bytes: int | None = None) -> Dataset:
    """`digits` or a file of arrays `x` and `y` (.npz, .safetensors, weights-only .pt); a file
    whose arrays take more than `budget_bytes` is refused before it is read."""
    if spec == "digits":
        return load_digits()
    arrays = read_arrays(spec, "data", budget_bytes)
    return dataset_from_arrays(Path(spec).name, arrays)


def dataset_from_arrays(name: str, arrays: dict[str, np.ndarray]) -> Dataset:
    """Check `x` and `y` against every rule and build the data set (DataError on the first)."""
    for key in ("x", "y"):
        if key not in arrays:
            found = ", ".join(sorted(arrays)[:8]) or "nothing"
            raise DataError(f"{name} has no array {key!r} (found: {found})")
    x, y = arrays["x"], arrays["y"]
    if x.dtype.kind not in "biuf":
        raise DataError(f"x: must hold numbers (got {x.dtype})")
    if y.dtype.kind not in "biuf":
        raise DataError(f"y: must hold class labels (got {y.dtype})")
    if x.ndim < 2:
        raise DataError(f"x: must be (rows, features…), got shape {tuple(x.shape)}")
    if y.ndim != 1:
        raise DataError(f"y: must be one label per row (1-D), got shape {tuple(y.shape)}")
    if x.shape[0] != y.shape[0]:
        raise DataError(f"x has {x.shape[0]} rows but y has {y.shape[0]}: lengths differ")
    if x.shape[0] < 2:
        raise DataError(f"x: needs at least 2 rows (got {x.shape[0]})")
    if 0 in x.shape[1:]:
        raise DataError(f"x: each row must hold at least one value (got shape {tuple(x.shape)})")
    x = x.astype(np.float32)
    bad = ~np.isfinite(x.reshape(x.shape[0], -1)).all(axis=1)
    if bad.any():
        raise DataError(
            f"x: {int(bad.sum())} rows hold NaN or inf (first: row {int(np.argmax(bad))})"
        )
    if y.dtype.kind == "f":
        if not np.isfinite(y).all():
            raise DataError("y: labels must be finite (found NaN or inf)")
        if (y != np.round(y)).any():
            first = int(np.argmax(y != np.round(y)))
            raise DataError(f"y: labels must be whole numbers (row {first} holds {y[first]:g})")
    labels = y.astype(np.int64)
    classes = int(labels.max()) + 1
    if "classes" in arrays:
        classes = _classes(arrays["classes"])
    outside = (labels < 0) | (labels >= classes)
    if outside.any():
        first = int(np.argmax(outside))
        raise DataError(f"y: labels must be in 0…{classes - 1} (row {first} holds {labels[first]})")
    present = np.unique(labels)
    if present.size < 2:  # every answer right or every answer wrong: no accuracy to compare
        raise DataError(
            f"y: every row has label {present[0]}: held-out accuracy needs at least 2 classes"
        )
    image = x.ndim in (3, 4)
    if x.ndim == 3:
        x = x[:, None]  # (N, H, W): one channel
    return Dataset(name=name, x=x, y=labels, classes=classes, image=image)


def _classes(value: np.ndarray) -> int:
    """An optional `classes` array: one whole number ≥ 2 (labels are checked against it)."""
    if value.size != 1 or value.dtype.kind not in "iu":
        raise DataError("classes: must be one whole number (the number of classes)")
    classes = int(value.reshape(()))
    if classes < 2:
        raise DataError(f"classes: must be at least 2 (got {classes})")
    return classes


def split(dataset: Dataset, seed: int) -> Split:
    """A fixed, seeded shuffle: the last quarter of it is held out, the rest trained on."""
    order = np.random.default_rng(seed + SPLIT_SEED_OFFSET).permutation(dataset.rows)
    n_test = max(1, round(dataset.rows * TEST_FRACTION))
    return Split(train=np.sort(order[n_test:]), test=np.sort(order[:n_test]))

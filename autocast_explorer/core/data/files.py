"""Reading a user's arrays and weights without running anything from the file.

.npz is read with `allow_pickle=False`, .safetensors by our numpy reader, .pt only through
`torch.load(weights_only=True)` (tensors and plain containers; a pickled class is refused).
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from autocast_explorer.core.data.errors import DataError
from autocast_explorer.core.data.safetensors import SafetensorsError, read_safetensors

if TYPE_CHECKING:
    import torch

SUFFIXES: dict[str, tuple[str, ...]] = {
    "data": (".npz", ".safetensors", ".pt"),
    "checkpoint": (".safetensors", ".pt"),
}


def read_arrays(path: str | Path, field_name: str) -> dict[str, np.ndarray]:
    """Every named array in the file as numpy (DataError of `field_name`, one line, if not)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES[field_name]:
        raise DataError(
            f"{path.name}: must be a {', '.join(SUFFIXES[field_name])} file", field_name
        )
    if not path.is_file():
        raise DataError(f"{path}: no such file", field_name)
    try:
        if suffix == ".npz":
            if not zipfile.is_zipfile(path):  # numpy would try (and refuse) it as a pickle
                raise DataError(f"{path.name}: not a .npz archive (numpy.savez writes one)")
            with np.load(path, allow_pickle=False) as archive:
                return {k: archive[k] for k in archive.files}
        if suffix == ".safetensors":
            return read_safetensors(path)
        return {k: v.numpy() for k, v in _torch_tensors(path, field_name).items()}
    except DataError:
        raise
    except (OSError, ValueError, zipfile.BadZipFile, SafetensorsError) as exc:
        raise DataError(f"{path.name}: cannot be read ({_short(exc)})", field_name) from None


def read_state_dict(path: str | Path) -> dict[str, torch.Tensor]:
    """A checkpoint's tensors by parameter name, as torch tensors."""
    import torch

    path = Path(path)
    if path.suffix.lower() == ".pt" and path.is_file():
        try:
            return _torch_tensors(path, "checkpoint")
        except DataError:
            raise
        except (OSError, ValueError, RuntimeError) as exc:
            raise DataError(f"{path.name}: cannot be read ({_short(exc)})", "checkpoint") from None
    arrays = read_arrays(path, "checkpoint")
    return {k: torch.from_numpy(np.array(v, order="C")) for k, v in arrays.items()}


def _torch_tensors(path: Path, field_name: str) -> dict[str, torch.Tensor]:
    """A weights-only .pt holding a dict of tensors (a state_dict or {'x': …, 'y': …})."""
    import pickle

    import torch

    try:
        loaded: Any = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        raise DataError(
            f"{path.name}: refused by torch.load(weights_only=True) ({_short(exc)})", field_name
        ) from None
    if (
        isinstance(loaded, dict)
        and "state_dict" in loaded
        and isinstance(loaded["state_dict"], dict)
    ):
        loaded = loaded["state_dict"]
    if not isinstance(loaded, dict):
        raise DataError(
            f"{path.name}: must hold a dict of tensors (got {type(loaded).__name__})", field_name
        )
    out: dict[str, torch.Tensor] = {}
    for key, value in loaded.items():
        if not isinstance(value, torch.Tensor):
            raise DataError(
                f"{path.name}: {str(key)[:60]} is a {type(value).__name__}, not a tensor",
                field_name,
            )
        tensor = value.detach().cpu()
        out[str(key)] = tensor.float() if tensor.dtype == torch.bfloat16 else tensor
    return out


def _short(exc: BaseException) -> str:
    """The first line of an exception's message, at most 160 characters."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:160]

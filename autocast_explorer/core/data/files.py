"""Reading a user's arrays and weights without running anything from the file.

.npz is read with `allow_pickle=False`, .safetensors by our numpy reader, .pt only through
`torch.load(weights_only=True)` (tensors and plain containers; a pickled class is refused).
Every refusal is one line naming the file or the tensor and the rule: a file that is missing,
not a regular file, empty, truncated, larger than the memory budget, or a tensor no array can
be made of (float8, sparse, quantized, meta, nested, complex) is a DataError, never a traceback.
"""

from __future__ import annotations

import math
import re
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from autocast_explorer.core.data.errors import DataError
from autocast_explorer.core.data.safetensors import SafetensorsError, read_safetensors
from autocast_explorer.core.documents.files import not_a_regular_file

if TYPE_CHECKING:
    import torch

SUFFIXES: dict[str, tuple[str, ...]] = {
    "data": (".npz", ".safetensors", ".pt"),
    "checkpoint": (".safetensors", ".pt"),
}
#: The tensor dtypes an array is made of: numpy's own, and bfloat16 (widened to float32).
READABLE_DTYPES = frozenset(
    {
        *("bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64"),
        *("float16", "float32", "float64", "bfloat16"),
    }
)


def read_arrays(
    path: str | Path, field_name: str, budget_bytes: int | None = None
) -> dict[str, np.ndarray]:
    """Every named array in the file as numpy (DataError of `field_name`, one line, if not).

    Arrays that would take more than `budget_bytes` are refused before they are read.
    """
    path = _readable(path, field_name)
    suffix = path.suffix.lower()
    try:
        if suffix == ".npz":
            return _read_npz(path, field_name, budget_bytes)
        _within_budget(path.name, path.stat().st_size, budget_bytes, field_name)
        if suffix == ".safetensors":
            return read_safetensors(path)
        return {k: v.numpy() for k, v in _torch_tensors(path, field_name).items()}
    except DataError:
        raise
    except MemoryError:
        raise DataError(f"{path.name}: its arrays do not fit in memory", field_name) from None
    except (OSError, ValueError, zipfile.BadZipFile, SafetensorsError) as exc:
        raise DataError(f"{path.name}: cannot be read ({_short(exc)})", field_name) from None


def read_state_dict(path: str | Path, budget_bytes: int | None = None) -> dict[str, torch.Tensor]:
    """A checkpoint's tensors by parameter name, as torch tensors."""
    import torch

    path = Path(path)
    if path.suffix.lower() == ".pt":
        path = _readable(path, "checkpoint")
        _within_budget(path.name, path.stat().st_size, budget_bytes, "checkpoint")
        return _torch_tensors(path, "checkpoint")
    arrays = read_arrays(path, "checkpoint", budget_bytes)
    return {k: torch.from_numpy(np.array(v, order="C")) for k, v in arrays.items()}


def _readable(path: str | Path, field_name: str) -> Path:
    """`path` if it has a suffix of `field_name`'s and is a regular, non-empty file; asked
    without opening it (a FIFO would wait for a writer)."""
    path = Path(path)
    if path.suffix.lower() not in SUFFIXES[field_name]:
        raise DataError(
            f"{path.name}: must be a {', '.join(SUFFIXES[field_name])} file", field_name
        )
    why = not_a_regular_file(path)
    if why:
        raise DataError(f"{path}: {why}", field_name)
    if path.stat().st_size == 0:
        raise DataError(f"{path.name}: the file is empty (0 bytes)", field_name)
    return path


def _within_budget(name: str, size: int, budget_bytes: int | None, field_name: str) -> None:
    if budget_bytes is not None and size > budget_bytes:
        raise DataError(
            f"{name}: its arrays take {_size(size)}, more than the memory budget of "
            f"{_size(budget_bytes)}",
            field_name,
        )


def _read_npz(path: Path, field_name: str, budget_bytes: int | None) -> dict[str, np.ndarray]:
    """The arrays of an .npz, once every header's claim fits the file and the budget."""
    if not zipfile.is_zipfile(path):  # numpy would try (and refuse) it as a pickle
        raise DataError(f"{path.name}: not a .npz archive (numpy.savez writes one)", field_name)
    with zipfile.ZipFile(path) as archive:
        needed = sum(
            _npz_claim(path.name, archive, info, field_name)
            for info in archive.infolist()
            if info.filename.endswith(".npy")
        )
    _within_budget(path.name, needed, budget_bytes, field_name)
    with np.load(path, allow_pickle=False) as arrays:
        out = {k: arrays[k] for k in arrays.files}
    for key, value in out.items():
        if not isinstance(value, np.ndarray):
            raise DataError(f"{path.name}: {key} is not a .npy array", field_name)
    return out


def _npz_claim(name: str, archive: zipfile.ZipFile, info: zipfile.ZipInfo, field: str) -> int:
    """The bytes one member's header says it holds; DataError if the member holds fewer (a
    header claiming 10^10 rows would otherwise be allocated before the short read is found)."""
    key = info.filename.removesuffix(".npy")
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            shape, _fortran, dtype = np.lib.format.read_array_header_1_0(member)
        elif version == (2, 0):
            shape, _fortran, dtype = np.lib.format.read_array_header_2_0(member)
        else:  # 3.0 (a UTF-8 header): numpy's own reading decides
            return 0
        held = info.file_size - member.tell()
    if dtype.hasobject:  # refused by allow_pickle=False when read
        return 0
    needed = math.prod(shape) * dtype.itemsize
    if needed > held:
        raise DataError(
            f"{name}: {key} claims shape {shape} of {dtype.name} ({_size(needed)}) but the "
            f"file holds {_size(held)} of it: truncated or corrupt",
            field,
        )
    return needed


def _size(count: int) -> str:
    return f"{count:,} bytes" if count < 2**20 else f"{count / 2**20:,.0f} MB"


def _torch_tensors(path: Path, field_name: str) -> dict[str, torch.Tensor]:
    """A weights-only .pt holding a dict of tensors (a state_dict or {'x': …, 'y': …})."""
    loaded = _torch_load(path, field_name)
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
    import torch

    out: dict[str, torch.Tensor] = {}
    for key, value in loaded.items():
        if not isinstance(value, torch.Tensor):
            raise DataError(
                f"{path.name}: {str(key)[:60]} is a {type(value).__name__}, not a tensor",
                field_name,
            )
        problem = _tensor_problem(value)
        if problem:
            raise DataError(f"{path.name}: {str(key)[:60]} {problem}", field_name)
        tensor = value.detach().cpu()
        out[str(key)] = tensor.float() if tensor.dtype == torch.bfloat16 else tensor
    return out


def _torch_load(path: Path, field_name: str) -> Any:
    """torch.load(weights_only=True), its failures one line: a pickled class is refused, any
    other failure means the file is cut short or is not what torch.save writes."""
    import pickle
    import warnings

    import torch

    try:
        with warnings.catch_warnings():  # quantized storages warn of TypedStorage: not the user's
            warnings.simplefilter("ignore")
            return torch.load(path, map_location="cpu", weights_only=True)
    except MemoryError:
        raise
    except pickle.UnpicklingError as exc:
        reason = _unpickler_reason(exc)
        if "global" in reason.lower():
            raise DataError(
                f"{path.name}: refused by torch.load(weights_only=True) ({reason})", field_name
            ) from None
        raise DataError(
            f"{path.name}: truncated or not a torch.save file ({reason})", field_name
        ) from None
    except Exception as exc:  # hostile bytes raise anything: EOFError, KeyError, RuntimeError…
        raise DataError(
            f"{path.name}: truncated or not a torch.save file ({_load_reason(exc)})", field_name
        ) from None


def _load_reason(exc: Exception) -> str:
    """torch.load's first sentence (its RuntimeErrors go on about miniz for lines)."""
    if isinstance(exc, EOFError):
        return "it ends early"
    first = _short(exc).split(". ")[0]
    return first if isinstance(exc, RuntimeError) else f"{type(exc).__name__}: {first}"


#: The weights-only unpickler naming what it refused, for a class and for a function.
_BLOCKED_GLOBAL = re.compile(r"(Unsupported global: GLOBAL|Trying to load unsupported GLOBAL) \S+")


def _unpickler_reason(exc: BaseException) -> str:
    """The weights-only unpickler's own reason, without torch's paragraphs of advice: its
    paragraph naming the blocked global ("Unsupported global: …" for a class, "Trying to load
    unsupported GLOBAL posix.system …" for a function), else the text after "error:"."""
    blocked = _BLOCKED_GLOBAL.search(str(exc))
    if blocked:
        return blocked.group(0)
    tail = str(exc).rsplit("error:", 1)[-1]
    first = " ".join(tail.strip().split("\n\n")[0].split())
    return first.split(". ")[0][:160] or type(exc).__name__


def _tensor_problem(tensor: torch.Tensor) -> str:
    """Why no array can be made of `tensor` ('' when one can): it must be a plain, dense tensor
    holding values of a READABLE_DTYPES dtype (numpy has no float8, bits or qint types)."""
    import torch

    if type(tensor) not in (torch.Tensor, torch.nn.Parameter):
        return f"is a {type(tensor).__name__}: only plain dense tensors are read"
    dtype = str(tensor.dtype).removeprefix("torch.")
    if tensor.layout != torch.strided:
        layout = str(tensor.layout).removeprefix("torch.")
        return f"is a {layout} tensor: only dense tensors are read (save tensor.to_dense())"
    if tensor.is_quantized:
        return f"is quantized ({dtype}): only plain tensors are read (save tensor.dequantize())"
    if tensor.is_meta:
        return "is a meta tensor: it holds no values"
    if dtype not in READABLE_DTYPES:
        return f"is {dtype}: only bool, integer, float16/32/64 and bfloat16 tensors are read"
    return ""


def _short(exc: BaseException) -> str:
    """The first line of an exception's message, at most 160 characters."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:160]

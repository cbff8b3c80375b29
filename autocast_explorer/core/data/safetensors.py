"""The safetensors format, read and written with numpy alone.

The format is small and fixed (an 8-byte little-endian header length, a JSON header naming each
tensor's dtype, shape and byte range, then the bytes), so reading it here costs fewer lines than
a dependency and lets every refusal name the tensor and the rule. Nothing in a file is executed.
bfloat16, which numpy lacks, is widened to float32 exactly (its bits are float32's top half).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np

#: Header larger than this is refused before parsing (safetensors' own limit is 100 MB).
MAX_HEADER_BYTES = 100 * 2**20

_NUMPY: dict[str, str] = {
    "F64": "<f8",
    "F32": "<f4",
    "F16": "<f2",
    "I64": "<i8",
    "I32": "<i4",
    "I16": "<i2",
    "I8": "i1",
    "U8": "u1",
    "BOOL": "?",
}
_CODES: dict[str, str] = {np.dtype(v).str.replace("|", ""): k for k, v in _NUMPY.items()}


class SafetensorsError(ValueError):
    """A file that is not valid safetensors; the message names the tensor and the rule."""


def read_safetensors(path: str | Path) -> dict[str, np.ndarray]:
    """Every tensor of the file as a numpy array (bfloat16 widened to float32)."""
    blob = Path(path).read_bytes()
    if len(blob) < 8:
        raise SafetensorsError("shorter than the 8-byte header length: not a safetensors file")
    (size,) = struct.unpack("<Q", blob[:8])
    if size > min(MAX_HEADER_BYTES, len(blob) - 8):
        raise SafetensorsError(f"header length {size} is beyond the file: not a safetensors file")
    try:
        header = json.loads(blob[8 : 8 + size])
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise SafetensorsError("the header is not JSON: not a safetensors file") from None
    if not isinstance(header, dict):
        raise SafetensorsError("the header is not a JSON object: not a safetensors file")
    body = memoryview(blob)[8 + size :]
    out: dict[str, np.ndarray] = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        out[name] = _tensor(name, entry, body)
    return out


def _tensor(name: str, entry: object, body: memoryview) -> np.ndarray:
    if not isinstance(entry, dict):
        raise SafetensorsError(f"{name}: expected an object with dtype, shape and data_offsets")
    dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if dtype != "BF16" and dtype not in _NUMPY:
        raise SafetensorsError(f"{name}: dtype {str(dtype)[:20]!r} is not supported")
    if not isinstance(shape, list) or not all(
        isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
    ):
        raise SafetensorsError(f"{name}: shape must be a list of whole numbers ≥ 0")
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(isinstance(o, int) and not isinstance(o, bool) for o in offsets)
        or not 0 <= offsets[0] <= offsets[1] <= len(body)
    ):
        raise SafetensorsError(f"{name}: data_offsets must be [start, end] inside the file")
    itemsize = 2 if dtype == "BF16" else np.dtype(_NUMPY[dtype]).itemsize
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if offsets[1] - offsets[0] != count * itemsize:
        raise SafetensorsError(
            f"{name}: {offsets[1] - offsets[0]} bytes do not hold shape {shape} of {dtype}"
        )
    raw = body[offsets[0] : offsets[1]]
    if dtype == "BF16":
        bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        return bits.view(np.float32).reshape(shape)
    return np.frombuffer(raw, dtype=_NUMPY[dtype]).reshape(shape).copy()


def write_safetensors(path: str | Path, tensors: dict[str, np.ndarray]) -> None:
    """Write numpy arrays as safetensors (what tests and users' exports need)."""
    header: dict[str, object] = {}
    chunks: list[bytes] = []
    offset = 0
    for name, array in tensors.items():
        array = np.array(array, order="C")  # a copy; ascontiguousarray would make 0-d 1-d
        code = _CODES.get(array.dtype.str.replace("|", ""))
        if code is None:
            raise SafetensorsError(f"{name}: numpy dtype {array.dtype} has no safetensors code")
        data = array.astype(array.dtype.newbyteorder("<")).tobytes()
        header[name] = {
            "dtype": code,
            "shape": list(array.shape),
            "data_offsets": [offset, offset + len(data)],
        }
        chunks.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    Path(path).write_bytes(struct.pack("<Q", len(text)) + text + b"".join(chunks))

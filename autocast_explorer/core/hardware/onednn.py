"""Which oneDNN kernel ran: oneDNN's verbose log for one forward, captured in-process.

oneDNN writes its verbose lines from C++ to file descriptor 1, past Python's sys.stdout, so the
capture swaps fd 1 for a temporary file (os.dup2) around one forward with verbose on. The
`info` lines (naming the ISA oneDNN dispatched to) are printed only the first time verbose is
switched on in a process, so they are remembered. While fd 1 is swapped, anything another
thread prints to stdout lands in the capture too; the swap lasts one forward.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import re
import sys
import tempfile
from collections.abc import Callable
from typing import Any, ClassVar

import torch
from pydantic import model_validator

from autocast_explorer.core.documents.field_types import Flag, NullableText, Text
from autocast_explorer.core.documents.model import Part, dump, read
from autocast_explorer.core.runtime.autocast import autocast_context

_ISA_LINE: dict[str, str] = {}
_GEMM_PRIMITIVES = frozenset({"matmul", "inner_product", "convolution"})
#: oneDNN's data type names, in the spelling used everywhere else in the explorer.
_DT_NAMES = {"bf16": "bfloat16", "f16": "float16", "f32": "float32", "s8": "int8", "u8": "uint8"}


def _isa(implementation: Any) -> str:
    """The ISA part of an implementation name ('avx512_core_bf16'), or '' if it has none."""
    if not isinstance(implementation, str):
        return ""
    return implementation.split(":", 1)[1] if ":" in implementation else ""


class OneDnnKernel(Part):
    """One executed oneDNN primitive: `implementation` is e.g. 'brg_matmul:avx512_core_bf16'."""

    primitive: Text
    implementation: Text
    #: The ISA part of the implementation ('avx512_core_bf16', '' if none): computed when not
    #: given, written for readers of the file.
    isa: Text = ""
    src_dtype: Text
    problem: Text

    @model_validator(mode="before")
    @classmethod
    def _isa_from_implementation(cls, data: Any) -> Any:
        if isinstance(data, dict) and "isa" not in data:
            data = {**data, "isa": _isa(data.get("implementation"))}
        return data

    def to_dict(self) -> dict[str, Any]:
        return dump(self)


class OneDnnProbe(Part):
    """which oneDNN kernel ran (its verbose log of one forward)"""

    # What oneDNN reported for one float32 and one autocast forward of the same model.
    schema_name: ClassVar[str] = "one_dnn"

    dtype: Text
    available: Flag
    captured: Flag
    #: True when the ISA kernel of the autocast GEMMs is known: computed when not given.
    determined: Flag = False
    version: NullableText = None
    cpu_isa: NullableText = None
    autocast_kernels: tuple[OneDnnKernel, ...]
    float32_kernels: tuple[OneDnnKernel, ...]
    summary: Text
    error: NullableText = None

    @model_validator(mode="before")
    @classmethod
    def _determined_from_kernels(cls, data: Any) -> Any:
        if isinstance(data, dict) and "determined" not in data:
            kernels = data.get("autocast_kernels")
            if isinstance(kernels, tuple | list):
                found = any(_kernel_isa(k) for k in kernels)
                data = {**data, "determined": found}
        return data

    def to_dict(self) -> dict[str, Any]:
        return dump(self)

    @classmethod
    def from_dict(cls, data: Any, path: str = "onednn") -> OneDnnProbe:
        """Strict reading (DocumentFormatError naming the first bad field)."""
        return read(cls, data, at=path)


def _kernel_isa(kernel: Any) -> str:
    if isinstance(kernel, OneDnnKernel):
        return kernel.isa
    if isinstance(kernel, dict):
        isa = kernel.get("isa")
        return isa if isinstance(isa, str) else _isa(kernel.get("implementation"))
    return ""


@functools.cache
def onednn_version() -> str | None:
    """oneDNN's version as torch was built with it ('3.12.0'), from torch.__config__."""
    match = re.search(r"(?:MKL-DNN|oneDNN) v([\d.]+)", torch.__config__.show())
    return match.group(1) if match else None


def flush_c_stdio() -> None:
    """Flush C stdio buffers so nothing from before or during the swap lands in the wrong file."""
    with contextlib.suppress(OSError, AttributeError, TypeError):
        ctypes.CDLL(None).fflush(None)


def capture_fd1(fn: Callable[[], object]) -> str:
    """Run `fn` with file descriptor 1 pointed at a temporary file; return what was written."""
    sys.stdout.flush()
    flush_c_stdio()
    saved = os.dup(1)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        try:
            fn()
        finally:
            flush_c_stdio()
            os.dup2(saved, 1)
            os.close(saved)
        sink.seek(0)
        return sink.read().decode("utf-8", errors="replace")


def parse_verbose(text: str) -> tuple[list[OneDnnKernel], str | None]:
    """Executed primitives and the `isa:` info line from oneDNN verbose output (v1 format).

    Lines look like `onednn_verbose,v1,primitive,exec,cpu,matmul,brg_matmul:avx512_core_bf16,
    undef,src:bf16::blocked:ab::f0 wei:…,attrs,aux,128x256:256x256,0.09`.
    """
    kernels: list[OneDnnKernel] = []
    isa: str | None = None
    for line in text.splitlines():
        if not line.startswith(("onednn_verbose", "dnnl_verbose")):
            continue
        parts = line.split(",")
        if parts[1:2] == ["v1"]:
            parts = [parts[0], *parts[2:]]
        if len(parts) >= 4 and parts[1] == "info" and parts[3].startswith("isa:"):
            isa = parts[3].removeprefix("isa:")
        elif len(parts) >= 10 and parts[1:3] == ["primitive", "exec"]:
            src = re.search(r"src(?:_\w+)?:(\w+)", parts[7])
            kernels.append(
                OneDnnKernel(
                    primitive=parts[4],
                    implementation=parts[5],
                    src_dtype=_DT_NAMES.get(src.group(1), src.group(1)) if src else "?",
                    problem=parts[-2],
                )
            )
    return kernels, isa


def fpmath_gemms(text: str, mode: str = "bf16") -> tuple[list[str], list[str]]:
    """From a verbose log: every executed GEMM's implementation, and those that ran with
    `attr-fpmath:<mode>` (float32 tensors, lower-precision maths: fp32_precision's effect)."""
    gemms: list[str] = []
    lowered: list[str] = []
    for kernel, line in zip(*_exec_lines(text), strict=True):
        if kernel.primitive not in _GEMM_PRIMITIVES:
            continue
        gemms.append(kernel.implementation)
        if f"fpmath:{mode}" in line:
            lowered.append(kernel.implementation)
    return gemms, lowered


def _exec_lines(text: str) -> tuple[list[OneDnnKernel], list[str]]:
    """Executed primitives with the raw verbose line each came from."""
    kernels: list[OneDnnKernel] = []
    lines: list[str] = []
    for line in text.splitlines():
        found, _ = parse_verbose(line)
        if found:
            kernels.extend(found)
            lines.extend([line] * len(found))
    return kernels, lines


def _forward_log(model: torch.nn.Module, x: torch.Tensor, dtype: torch.dtype | None) -> str:
    def forward() -> None:
        with (
            torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON),
            torch.no_grad(),
            autocast_context(dtype),
        ):
            model(x)

    return capture_fd1(forward)


def _distinct(kernels: list[OneDnnKernel]) -> list[str]:
    gemms = [k.implementation for k in kernels if k.primitive in _GEMM_PRIMITIVES]
    return list(dict.fromkeys(i for i in gemms if i))


def summarize(
    dtype: str, autocast: list[OneDnnKernel], float32: list[OneDnnKernel], isa: str | None
) -> str:
    """One sentence on which kernels ran, or why that could not be determined."""
    gemms = _distinct(autocast)
    where = f" (oneDNN dispatches to: {isa})" if isa else ""
    if gemms:
        text = f"The {dtype} GEMMs ran in oneDNN as {', '.join(gemms)}{where}"
    else:
        text = (
            f"oneDNN reported no GEMM for the {dtype} forward: it ran in torch's own kernels "
            "(or MKL), so which ISA kernel ran could not be determined"
        )
    f32 = _distinct(float32)
    if f32:
        text += f"; float32 GEMMs ran in oneDNN as {', '.join(f32)}."
    else:
        text += "; float32 GEMMs did not go through oneDNN (MKL or torch's own kernels)."
    return text


def probe(model: torch.nn.Module, x: torch.Tensor, dtype: torch.dtype) -> OneDnnProbe:
    """One float32 and one autocast forward with oneDNN verbose on; never raises."""
    name = str(dtype).removeprefix("torch.")
    available = bool(torch.backends.mkldnn.is_available())
    version = onednn_version()
    if not available:
        return OneDnnProbe(
            dtype=name,
            available=False,
            captured=False,
            version=version,
            cpu_isa=None,
            autocast_kernels=(),
            float32_kernels=(),
            summary="This torch was built without oneDNN.",
            error=None,  # written as null, as in every probe
        )
    try:
        auto_text = _forward_log(model, x, dtype)
        f32_text = _forward_log(model, x, None)
    except (OSError, RuntimeError, AttributeError, ValueError) as exc:
        return OneDnnProbe(
            dtype=name,
            available=True,
            captured=False,
            version=version,
            cpu_isa=_ISA_LINE.get("isa"),
            autocast_kernels=(),
            float32_kernels=(),
            summary=f"oneDNN's verbose output could not be captured ({exc}), so which ISA "
            "kernel ran could not be determined.",
            error=str(exc),
        )
    auto, isa1 = parse_verbose(auto_text)
    f32, isa2 = parse_verbose(f32_text)
    if isa1 or isa2:
        _ISA_LINE["isa"] = isa1 or isa2 or ""
    isa = _ISA_LINE.get("isa") or None
    return OneDnnProbe(
        dtype=name,
        available=True,
        captured=True,
        version=version,
        cpu_isa=isa,
        autocast_kernels=tuple(auto),
        float32_kernels=tuple(f32),
        summary=summarize(name, auto, f32, isa),
        error=None,
    )

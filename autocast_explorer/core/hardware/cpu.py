"""What this machine is: CPU model, low-precision ISA flags, torch's own capability queries.

Flags come from torch.cpu.get_capabilities() (hardware.capabilities); torch's oneDNN queries
are recorded beside them because oneDNN can *emulate* bfloat16 on CPUs without native bf16.
"""

from __future__ import annotations

import functools
import os
import platform
import sys
from typing import Annotated, Any

import torch
from pydantic import Field

from autocast_explorer.core.documents.field_types import (
    AnyObject,
    Flag,
    NullableFlag,
    Text,
    Texts,
    Whole,
)
from autocast_explorer.core.documents.model import Part, dump, read
from autocast_explorer.core.documents.reader import clean_text
from autocast_explorer.core.hardware.capabilities import (
    CpuCapabilities,
    cpu_capabilities,
    native_support,
)

#: Flags that decide whether low-precision GEMMs run natively (x86 names, then Arm's).
LOW_PRECISION_FLAGS: tuple[str, ...] = (
    "avx512_bf16",
    "amx_bf16",
    "amx_tile",
    "avx512_fp16",
    "amx_fp16",
    "avx512_vnni",
    "avx512f",
    "avx2",
    "fma",
    "asimd",
    "bf16",
    "svebf16",
    "fphp",
    "asimdhp",
    "sve",
)


class Environment(Part):
    """The `environment` object of every document (older files lack some keys: defaults)."""

    # The facts a result depends on, recorded with every result so runs can be compared.
    torch_version: Text = "?"
    python: Text = "?"
    os: Text = "?"
    cpu_model: Text = "?"
    cpu_capability: Annotated[
        Text, Field(description="torch.backends.cpu.get_cpu_capability()")
    ] = "?"
    cpu_flags: Texts = ()
    native_bf16: Flag = False
    native_fp16: Flag = False
    torch_bf16_supported: NullableFlag = None
    torch_fp16_supported: NullableFlag = None
    mkldnn: Flag = False
    cores: Whole = 0
    threads: Whole = 0
    extra: AnyObject = Field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dump(self)

    @classmethod
    def from_dict(cls, data: Any, path: str = "environment") -> Environment:
        """Strict about types (a list where the CPU model goes is refused), lenient about
        absent keys (older files lack some); text is stripped of control characters."""
        return read(cls, data, at=path)

    @property
    def threads_text(self) -> str:
        """How many torch threads the run used, in words: "1 thread", "2 threads"."""
        return f"{self.threads} thread{'' if self.threads == 1 else 's'}"

    def label(self) -> str:
        """Short text naming the machine, for legends comparing runs."""
        return f"{self.cpu_model} · torch {self.torch_version} · {self.threads} thr"


@functools.cache
def cpu_identity() -> tuple[str, frozenset[str]]:
    """CPU model name and all flags (capabilities: torch first, /proc/cpuinfo fallback), once."""
    caps = cpu_capabilities()
    return clean_text(caps.name), caps.flags


def _torch_query(name: str) -> bool | None:
    """Call torch.ops.mkldnn.<name>() if this torch has it; None when it does not."""
    try:
        return bool(getattr(torch.ops.mkldnn, name)())
    except (AttributeError, RuntimeError):
        return None


def environment(threads: int | None = None, caps: CpuCapabilities | None = None) -> Environment:
    """Describe this machine and torch; `threads` is what the run used (default: torch's now).

    `caps` injects another CPU's capabilities (tests of every CPU kind); default: this one's.
    """
    caps = caps if caps is not None else cpu_capabilities()
    model, flags = caps.name, caps.flags
    try:
        capability = torch.backends.cpu.get_cpu_capability()
    except AttributeError:
        capability = "unknown"
    return Environment(
        torch_version=torch.__version__,
        python=platform.python_version(),
        os=f"{platform.system()} {platform.release()} ({sys.platform})",
        cpu_model=model,
        cpu_capability=capability,
        cpu_flags=tuple(f for f in LOW_PRECISION_FLAGS if f in flags),
        native_bf16=native_support(flags, "bfloat16").native,
        native_fp16=native_support(flags, "float16").native,
        torch_bf16_supported=_torch_query("_is_mkldnn_bf16_supported"),
        torch_fp16_supported=_torch_query("_is_mkldnn_fp16_supported"),
        mkldnn=bool(torch.backends.mkldnn.is_available()),
        cores=os.cpu_count() or 1,
        threads=threads if threads is not None else torch.get_num_threads(),
        extra={"flags_source": caps.source},
    )

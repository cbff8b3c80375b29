"""What this CPU offers: its flags, read from torch, and the one rule for "native dtype X".

torch.cpu.get_capabilities() answers on Linux, macOS, Windows and Arm alike; /proc/cpuinfo is
read only when this torch lacks that function (it exists from torch 2.8). Flags are kept in
/proc/cpuinfo's spelling (avx512f, fma, asimdhp) so results written by older versions compare.
The CPU's name comes from /proc/cpuinfo's model line, else torch's, else (Arm, where neither
has one) the core named by the MIDR fields /proc/cpuinfo lists (core/hardware/midr.py).

AUTOCAST_EXPLORER_CPU_FLAGS="avx2,fma" replaces the flags the program reports (not what the
CPU does): with oneDNN's and ATen's own ISA caps it lets a native-bf16 machine be run as an
AVX2-only host would report itself (docs/measurement.md).
"""

from __future__ import annotations

import functools
import os
import platform
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autocast_explorer.core.hardware.midr import midr_name

FLAGS_ENV = "AUTOCAST_EXPLORER_CPU_FLAGS"

#: torch's capability names that differ from /proc/cpuinfo's (x86 and Arm).
TORCH_TO_CPUINFO: dict[str, tuple[str, ...]] = {
    "avx512_f": ("avx512f",),
    "avx512_bw": ("avx512bw",),
    "avx512_vl": ("avx512vl",),
    "avx512_dq": ("avx512dq",),
    "avx512_cd": ("avx512cd",),
    "fma3": ("fma",),
    "neon": ("asimd",),
    "fp16_arith": ("fphp", "asimdhp"),
    "sve_bf16": ("svebf16",),
}

#: The instructions each dtype's native flags stand for, in words, per architecture: what a
#: CPU without them lacks ('x86', 'arm', or '' when the flags say neither).
LACKS: dict[str, dict[str, str]] = {
    "bfloat16": {
        "x86": "bfloat16 multiply instructions: neither AMX tiles nor AVX-512 BF16",
        "arm": "bfloat16 multiply instructions: not the Armv8.6 BF16 extension (BFDOT, BFMMLA)",
        "": "bfloat16 multiply instructions: neither x86's AMX or AVX-512 BF16 nor Arm's BF16",
    },
    "float16": {
        "x86": "float16 arithmetic instructions: neither AMX-FP16 nor AVX-512 FP16",
        "arm": "float16 arithmetic instructions: not the Armv8.2 half-precision extension",
        "": "float16 arithmetic instructions: neither x86's AMX-FP16 or AVX-512 FP16 nor Arm's "
        "half-precision extension",
    },
}
#: Flags that only one architecture reports: enough to tell which one a flag set is from.
ARM_MARKERS = frozenset({"asimd", "neon", "fp", "sve", "bf16", "svebf16", "asimdhp", "fphp"})
X86_MARKERS = frozenset({"sse", "sse2", "avx", "avx2", "fma", "avx512f", "amx_tile", "x86_64"})

#: The flags that make a low-precision dtype native, strongest unit first.
NATIVE_UNITS: dict[str, tuple[tuple[str, str], ...]] = {
    "bfloat16": (
        ("amx_bf16", "AMX (amx_bf16)"),
        ("avx512_bf16", "avx512_bf16"),
        ("bf16", "Arm bf16"),
        ("svebf16", "Arm SVE bf16"),
    ),
    "float16": (
        ("amx_fp16", "AMX (amx_fp16)"),
        ("avx512_fp16", "avx512_fp16"),
        ("asimdhp", "Arm half-precision arithmetic"),
        ("fphp", "Arm half-precision arithmetic"),
    ),
}


@dataclass(frozen=True)
class CpuCapabilities:
    """The CPU's name, flags (cpuinfo spelling) and where they were read from."""

    name: str
    flags: frozenset[str]
    source: str
    architecture: str = ""
    physical_cores: int = 0


@dataclass(frozen=True)
class NativeSupport:
    """Whether a dtype runs on native instructions here, which flags provide it, and if not,
    what the CPU does instead."""

    dtype: str
    native: bool
    present: tuple[str, ...]
    unit: str
    wanted: tuple[str, ...]

    @property
    def present_text(self) -> str:
        """'amx_bf16, avx512_bf16': the flags that provide the dtype, as listed everywhere."""
        return ", ".join(self.present)

    lacks: str = ""

    @property
    def instead(self) -> str:
        """What runs when the dtype is not native ('' when it is)."""
        if self.native:
            return ""
        return (
            f"every {self.dtype} matrix product converts its operands and runs in kernels that "
            "compute in float32 inside (torch's own, oneDNN's emulation or the BLAS library's)"
        )


def architecture_of(flags: Iterable[str]) -> str:
    """'x86', 'arm' or '' (neither, or both: an override mixing them) from the flag names."""
    present = set(flags)
    arm, x86 = bool(present & ARM_MARKERS), bool(present & X86_MARKERS)
    return "arm" if arm and not x86 else "x86" if x86 and not arm else ""


def native_support(flags: Iterable[str], dtype: str) -> NativeSupport:
    """The one rule: does a CPU with `flags` run `dtype` natively, and with which unit.

    `lacks` says in words what a CPU without native support is missing (for the CPU's
    architecture, read from its flags), for sentences users read.
    """
    present_flags = set(flags)
    units = NATIVE_UNITS.get(dtype)
    if units is None:  # float32: every CPU multiplies it natively
        return NativeSupport(dtype, True, (), "float32 FMA", ())
    wanted = tuple(dict.fromkeys(flag for flag, _ in units))
    present = tuple(sorted(flag for flag in wanted if flag in present_flags))
    unit = next((label for flag, label in units if flag in present_flags), "")
    lacks = "" if present else LACKS[dtype][architecture_of(present_flags)]
    return NativeSupport(dtype, bool(present), present, unit, tuple(sorted(wanted)), lacks)


def normalize(capabilities: Mapping[str, Any]) -> frozenset[str]:
    """Flags that torch reports True, in /proc/cpuinfo's spelling (both names kept)."""
    flags: set[str] = set()
    for name, value in capabilities.items():
        if value is True:
            flags.add(name)
            flags.update(TORCH_TO_CPUINFO.get(name, ()))
    return frozenset(flags)


def parse_flags(text: str) -> frozenset[str]:
    """'avx2, fma avx512f' → {'avx2', 'fma', 'avx512f'} (commas or spaces)."""
    return frozenset(text.replace(",", " ").split())


def read_cpuinfo(path: Path = Path("/proc/cpuinfo")) -> tuple[str, frozenset[str]]:
    """CPU model name and flags from /proc/cpuinfo (Linux only); empty where it is missing.

    Arm's /proc/cpuinfo has no model line: the name is then the core its first MIDR fields
    ('CPU implementer', 'CPU part') name, e.g. 'Arm Neoverse-N1'.
    """
    model = ""
    flags: frozenset[str] = frozenset()
    midr: dict[str, str] = {}
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return model, flags
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip().lower()
        if key in ("model name", "hardware", "cpu model") and value.strip():
            model = value.strip()
        elif key in ("flags", "features") and not flags:
            flags = frozenset(value.split())
        elif key in ("cpu implementer", "cpu part") and key not in midr:
            midr[key] = value.strip()
    if not model and len(midr) == 2:
        model = midr_name(midr["cpu implementer"], midr["cpu part"])
    return model, flags


def _torch_capabilities() -> Mapping[str, Any] | None:
    import torch

    query: Callable[[], Mapping[str, Any]] | None = getattr(torch.cpu, "get_capabilities", None)
    if query is None:
        return None
    try:
        return query()
    except (RuntimeError, AttributeError):
        return None


def capabilities_from(
    torch_caps: Mapping[str, Any] | None,
    cpuinfo: tuple[str, frozenset[str]],
    override: str | None,
) -> CpuCapabilities:
    """Combine the sources: torch first, /proc/cpuinfo where torch has no answer, then the
    override of the flags (the name and core count stay the machine's)."""
    model, info_flags = cpuinfo
    fallback_name = platform.processor() or platform.machine() or "unknown CPU"
    if torch_caps is not None:
        # /proc/cpuinfo's brand string (or MIDR core), where there is one, is the one users
        # know from lscpu; torch says "Unknown" where its cpuinfo library knows no name.
        torch_name = str(torch_caps.get("cpu_name") or "")
        if torch_name.strip().lower() == "unknown":
            torch_name = ""
        name = model or torch_name or fallback_name
        flags = normalize(torch_caps)
        source = "torch.cpu.get_capabilities()"
        arch = str(torch_caps.get("architecture", platform.machine()))
        cores = int(torch_caps.get("num_physical_cores", 0) or 0)
    else:
        name, flags, source = model or fallback_name, info_flags, "/proc/cpuinfo"
        arch, cores = platform.machine(), 0
    if override is not None and override.strip():
        flags = parse_flags(override)
        source = f"{FLAGS_ENV} (overrides {source})"
    return CpuCapabilities(name or "unknown CPU", flags, source, arch, cores)


@functools.cache
def cpu_capabilities() -> CpuCapabilities:
    """This machine's capabilities, read once per process."""
    return capabilities_from(_torch_capabilities(), read_cpuinfo(), os.environ.get(FLAGS_ENV))

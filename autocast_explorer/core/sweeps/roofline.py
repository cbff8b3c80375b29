"""Roofline: achieved GFLOP/s against an estimated compute peak, arithmetic intensity on x.

The peak is an *estimate*, cores × GHz × SIMD lanes × FMA units × 2, from what Linux tells us
(clock from cpufreq or /proc/cpuinfo, lanes from the ISA flags). The FMA-unit count cannot be
read from flags, so it is a stated assumption. Every input is returned with the number so the
window can show the formula, not just the result.

FLOPs are 2·B·in·out per Linear layer (a multiply-add is 2 FLOPs), summed over layers; bias
adds and activations are not counted. Bytes moved are likewise an estimate: each weight, bias
and activation read or written once, in the dtype the mode computes in.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

from pydantic import WithJsonSchema, model_validator

from autocast_explorer.core.documents.field_types import (
    Flag,
    NonNegative,
    PositiveWhole,
    Text,
    Whole,
)
from autocast_explorer.core.documents.held import derive, write_always
from autocast_explorer.core.documents.model import Part, dump, read
from autocast_explorer.core.experiment.config import (
    ExperimentConfig,
    flops_per_forward,
    parameter_count,
)
from autocast_explorer.core.experiment.families import family
from autocast_explorer.core.experiment.families.mlp import MLP_FLOPS_FORMULA
from autocast_explorer.core.hardware.capabilities import cpu_capabilities, native_support
from autocast_explorer.core.hardware.cpu import cpu_identity

#: What an MLP's FLOP count covers: a file without `flops_formula` is an MLP's (older files).
FLOPS_FORMULA = MLP_FLOPS_FORMULA
BYTES_FORMULA = (
    "bytes: float32 = 4·(P + A); autocast = 2·(P + A) + 6·(P + B·in₀) for the casts "
    "(read 4 B, write 2 B), where P = weights + biases, A = B·Σ widths (input and every "
    "Linear output), each moved once"
)
PEAK_FORMULA = "peak = cores × GHz × SIMD lanes × FMA units × 2"
ITEMSIZE = {"float32": 4, "bfloat16": 2, "float16": 2}


class PeakEstimate(Part):
    """An estimated compute ceiling for one dtype, with every input that went into it (the
    formula is written for readers, derived from the inputs)."""

    schema_name: ClassVar[str] = "peak"

    dtype: Text
    gflops: NonNegative
    cores: Whole
    ghz: NonNegative
    lanes: PositiveWhole
    fma_units: PositiveWhole
    isa: Text
    ghz_source: Text
    native: Flag
    note: Text
    formula: Text = ""
    estimate: Flag = True

    @model_validator(mode="after")
    def _formula_of_inputs(self) -> PeakEstimate:
        derive(
            self,
            formula=(
                f"{self.cores} core{'s' if self.cores != 1 else ''} × {self.ghz:.2f} GHz × "
                f"{self.lanes} lanes × "
                f"{self.fma_units} FMA unit{'s' if self.fma_units != 1 else ''} × 2 = "
                f"{self.gflops:,.0f} GFLOP/s (estimate)"
            ),
            estimate=True,
        )
        return self

    def to_dict(self) -> dict[str, Any]:
        return dump(self)

    @classmethod
    def from_dict(cls, data: Any, path: str = "peak") -> PeakEstimate:
        """Strict reading (DocumentFormatError naming the first bad field)."""
        return read(cls, data, at=path)


class RooflinePoint(Part):
    """One measured mode at one sweep point: x = FLOPs/byte (derived), y = achieved GFLOP/s."""

    value: PositiveWhole
    mode: Annotated[Literal["plain", "autocast"], WithJsonSchema({"enum": ["plain", "autocast"]})]
    dtype: Text
    intensity: NonNegative = 0.0
    gflops: NonNegative
    flops: Whole
    bytes: Whole

    @model_validator(mode="after")
    def _intensity_of_work(self) -> RooflinePoint:
        derive(self, intensity=self.flops / self.bytes if self.bytes else 0.0)
        return self


class Roofline(Part):
    """Peaks (float32 and the autocast dtype, by dtype) and the measured points under them:
    achieved GFLOP/s against estimated peaks (labelled as an estimate)."""

    schema_name: ClassVar[str] = "roofline"

    estimate: Flag = True
    flops_formula: Text = ""
    bytes_formula: Text = ""
    peak_formula: Text = ""
    peaks: dict[str, PeakEstimate]
    points: tuple[RooflinePoint, ...] = ()
    #: A caveat to show beside the chart (unknown clock, or a point above the estimate).
    note: Text = ""

    @model_validator(mode="after")
    def _note_of_points(self) -> Roofline:
        derive(self, estimate=True, note=self._note())
        write_always(self, "points")
        return self

    def peak(self, dtype: str) -> PeakEstimate | None:
        return self.peaks.get(dtype)

    @property
    def above_estimate(self) -> tuple[RooflinePoint, ...]:
        """Points faster than their dtype's estimated peak: the estimate was too low."""
        out = []
        for point in self.points:
            peak = self.peak(point.dtype)
            if peak is not None and 0 < peak.gflops < point.gflops:
                out.append(point)
        return tuple(out)

    def _note(self) -> str:
        if any(p.gflops <= 0 for p in self.peaks.values()):
            return "the CPU clock is unknown here, so no peak could be estimated"
        over = self.above_estimate
        if not over:
            return ""
        best = max(over, key=lambda p: p.gflops)
        peak = self.peak(best.dtype)
        assert peak is not None
        return (
            f"{len(over)} point(s) beat the estimated peak (best: {best.gflops:,.0f} vs "
            f"{peak.gflops:,.0f} GFLOP/s, {best.dtype}): the clock or the FMA-unit count "
            f"assumed ({peak.ghz:.2f} GHz from {peak.ghz_source}, {peak.fma_units} unit(s)) "
            "is below what this CPU really does"
        )

    def to_dict(self) -> dict[str, Any]:
        return dump(self)


# ---- inputs read from the machine -------------------------------------------------------
def cpu_ghz(
    cpuinfo: Path = Path("/proc/cpuinfo"),
    cpufreq: Path = Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"),
) -> tuple[float, str]:
    """The clock to assume and where it came from; (0, 'unknown') if neither source exists."""
    try:
        khz = int(cpufreq.read_text().strip())
        if khz > 0:
            return khz / 1e6, "cpufreq cpuinfo_max_freq (maximum clock)"
    except (OSError, ValueError):
        pass
    try:
        mhz = [
            float(line.split(":", 1)[1])
            for line in cpuinfo.read_text(errors="replace").splitlines()
            if line.lower().startswith("cpu mhz")
        ]
    except (OSError, ValueError, IndexError):
        mhz = []
    if mhz:
        return max(mhz) / 1e3, "/proc/cpuinfo 'cpu MHz' (current clock; boost may be higher)"
    return 0.0, "unknown (no cpufreq, no 'cpu MHz' in /proc/cpuinfo)"


def physical_cores(cpuinfo: Path = Path("/proc/cpuinfo")) -> int:
    """Distinct (physical id, core id) pairs; SMT siblings share one core's FMA units."""
    pairs: set[tuple[str, str]] = set()
    physical = "0"
    try:
        for line in cpuinfo.read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            key = key.strip().lower()
            if key == "physical id":
                physical = value.strip()
            elif key == "core id":
                pairs.add((physical, value.strip()))
    except OSError:
        pass
    # No /proc/cpuinfo (macOS, Windows): torch's own count of physical cores.
    return len(pairs) or cpu_capabilities().physical_cores or (os.cpu_count() or 1)


def _vendor(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    try:
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.lower().startswith("vendor_id"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


#: Known Arm cores' float32 FMA lanes per cycle (all pipes together), from the vendors'
#: optimization guides: (core name as midr.py spells it, lanes, what that is).
ARM_FMA_LANES: tuple[tuple[str, int, str], ...] = (
    ("Neoverse-N1", 8, "2×128-bit FMA pipes"),
    ("Neoverse-N2", 8, "2×128-bit FMA pipes"),
    ("Neoverse-N3", 8, "2×128-bit FMA pipes"),
    ("Neoverse-V1", 16, "2×256-bit SVE (4×128-bit NEON) FMA pipes"),
    ("Neoverse-V2", 16, "4×128-bit FMA pipes"),
    ("Neoverse-V3", 16, "4×128-bit FMA pipes"),
    ("Apple M", 16, "4×128-bit FMA pipes (performance cores)"),
    ("A64FX", 32, "2×512-bit SVE FMA pipes"),
)


def sve_vector_bits() -> int:
    """This process's SVE vector length in bits (prctl PR_SVE_GET_VL); 0 without SVE/Linux."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        length = int(libc.prctl(51, 0, 0, 0, 0))  # PR_SVE_GET_VL: bytes in the low 16 bits
    except (OSError, AttributeError):
        return 0
    return (length & 0xFFFF) * 8 if length > 0 else 0


def _arm_simd(flags: set[str], core: str, vector_bits: int) -> tuple[int, int, str, str]:
    """(lanes, FMA units, ISA, note) for float32 FMAs on an Arm core."""
    sve = "sve" in flags and vector_bits >= 128
    bits = vector_bits if sve else 128
    lanes = bits // 32
    isa = f"sve{bits}" if sve else "neon"
    width = f"{bits}-bit SVE" if sve else "128-bit NEON"
    known = next(((name, total, what) for name, total, what in ARM_FMA_LANES if name in core), None)
    if known is None:
        return lanes, 2, isa, f"{width}, 2 FMA units assumed (core not in the table)"
    name, total, what = known
    units = max(1, total // lanes)
    return lanes, units, isa, f"{width}; {name}: {what}, so {units} unit(s) of this width"


def float32_simd(
    flags: Iterable[str], vendor: str = "", core: str = "", vector_bits: int = 0
) -> tuple[int, int, str, str]:
    """(lanes, FMA units, ISA, note) for float32 FMAs, from the CPU flags.

    x86: the vendor (vendor_id) decides AVX-512's unit count. Arm: the SVE vector length
    (`vector_bits`, 0 = unknown or none) and the core's name (`core`, from MIDR) decide.
    """
    flags = set(flags)
    if "avx512f" in flags:
        if "AMD" in vendor.upper():
            return 16, 1, "avx512f", "AMD runs AVX-512 on 2×256-bit units (Zen 4): 1 unit assumed"
        return 16, 2, "avx512f", "2 AVX-512 FMA units assumed (server parts; clients have 1)"
    if "avx2" in flags and "fma" in flags:
        return 8, 2, "avx2+fma", "2 AVX2 FMA units assumed"
    if "avx" in flags:
        return 8, 1, "avx", "no FMA instructions: separate multiply and add assumed"
    if "asimd" in flags or "neon" in flags:
        return _arm_simd(flags, core, vector_bits)
    return 4, 1, "sse", "128-bit SIMD, 1 unit assumed"


def estimate_peak(
    dtype: str,
    threads: int,
    flags: Iterable[str] | None = None,
    ghz: tuple[float, str] | None = None,
    vendor: str | None = None,
    cores: int | None = None,
    core: str | None = None,
    vector_bits: int | None = None,
) -> PeakEstimate:
    """The estimated GFLOP/s ceiling for `dtype` with `threads` threads on this CPU.

    Without native instructions for a low-precision dtype, oneDNN/torch convert to float32
    and compute there, so the float32 peak is used as the (generous) ceiling. `core` (the
    CPU's name) and `vector_bits` (SVE length) matter on Arm only; default: this machine's.
    """
    flags = set(cpu_identity()[1] if flags is None else flags)
    clock, source = ghz if ghz is not None else cpu_ghz()
    used = max(1, min(threads, cores if cores is not None else physical_cores()))
    lanes, units, isa, note = float32_simd(
        flags,
        _vendor() if vendor is None else vendor,
        cpu_identity()[0] if core is None else core,
        sve_vector_bits() if vector_bits is None else vector_bits,
    )
    support = native_support(flags, dtype)
    native = support.native
    if dtype != "float32" and native:
        short = "bf16" if dtype == "bfloat16" else "fp16"
        if f"amx_{short}" in flags:
            lanes, units, isa = 1024, 1, f"amx_{short}"
            note = f"AMX tiles: 1024 {short} multiply-adds per cycle per core"
        elif f"avx512_{short}" in flags:
            lanes, isa = 32, f"avx512_{short}"
            what = "vdpbf16ps: 32 bf16 products" if short == "bf16" else "32 fp16 lanes"
            note = f"{what} per 512-bit op; {note}"
        elif short == "bf16":  # Arm: BFDOT, a 2-element dot product in each float32 lane
            sve = isa.startswith("sve") and "svebf16" in flags
            lanes, isa = lanes * 2, "svebf16" if sve else "bf16"
            note = (
                f"{support.unit}: BFDOT makes two bf16 products per float32 lane (BFMMLA "
                f"may do more); {note}"
            )
        else:  # Arm FP16 arithmetic: twice the lanes of the same vectors
            lanes, isa = lanes * 2, support.present[0]
            note = f"{support.unit}: twice float32's lanes per vector op; {note}"
    if not native:
        note = f"no native {dtype}: converted and computed as float32, float32 peak used; {note}"
    return PeakEstimate(
        dtype=dtype,
        gflops=used * clock * lanes * units * 2,
        cores=used,
        ghz=clock,
        lanes=lanes,
        fma_units=units,
        isa=isa,
        ghz_source=source,
        native=native,
        note=note,
    )


# ---- work and traffic of one forward ----------------------------------------------------
#: 2·B·in·out summed over the Linear layers: the engine's count, under the roofline's name.
linear_flops = flops_per_forward


def bytes_moved(widths: tuple[int, ...], batch: int, dtype: str | None) -> int:
    """Estimated bytes one forward moves; `dtype` None means float32 (see BYTES_FORMULA)."""
    params = parameter_count(widths)
    activations = batch * sum(widths)
    if dtype is None or dtype == "float32":
        return 4 * (params + activations)
    low = ITEMSIZE[dtype]
    casts = (4 + low) * (params + batch * widths[0])
    return low * (params + activations) + casts


def family_bytes_moved(config: ExperimentConfig, dtype: str | None) -> int:
    """bytes_moved for any model family: its parameters and activations, same formula."""
    from autocast_explorer.core.experiment.families import family

    fam = family(config)
    params = fam.parameter_count(config)
    activations = fam.activation_elements(config)
    if dtype is None or dtype == "float32":
        return 4 * (params + activations)
    low = ITEMSIZE[dtype]
    casts = (4 + low) * (params + fam.input_elements(config))
    return low * (params + activations) + casts


def arithmetic_intensity(widths: tuple[int, ...], batch: int, dtype: str | None) -> float:
    return linear_flops(widths, batch) / bytes_moved(widths, batch, dtype)


def build_roofline(
    dtype: str,
    threads: int,
    measured: Iterable[tuple[int, tuple[int, ...], int, float, float]],
    peaks: tuple[PeakEstimate, ...] | None = None,
) -> Roofline:
    """Roofline from measured points: (value, widths, batch, plain GFLOP/s, autocast GFLOP/s).

    `peaks` defaults to fresh estimates for float32 and `dtype` on this machine.
    """
    return build_roofline_from_work(
        dtype,
        threads,
        (
            (
                value,
                linear_flops(widths, batch),
                bytes_moved(widths, batch, None),
                bytes_moved(widths, batch, dtype),
                plain,
                auto,
            )
            for value, widths, batch, plain, auto in measured
        ),
        peaks,
    )


def build_roofline_from_work(
    dtype: str,
    threads: int,
    measured: Iterable[tuple[int, int, int, int, float, float]],
    peaks: tuple[PeakEstimate, ...] | None = None,
    flops_formula: str = FLOPS_FORMULA,
) -> Roofline:
    """Roofline from (value, flops, bytes plain, bytes autocast, GFLOP/s plain, autocast)
    per point: what any model family's sweep gives."""
    if peaks is None:
        peaks = (estimate_peak("float32", threads), estimate_peak(dtype, threads))
    points: list[RooflinePoint] = []
    for value, flops, bytes_plain, bytes_auto, plain, auto in measured:
        work = {"value": value, "flops": flops}
        points.append(
            RooflinePoint(**work, mode="plain", dtype="float32", bytes=bytes_plain, gflops=plain)
        )
        points.append(
            RooflinePoint(**work, mode="autocast", dtype=dtype, bytes=bytes_auto, gflops=auto)
        )
    return Roofline(
        flops_formula=flops_formula,
        bytes_formula=BYTES_FORMULA,
        peak_formula=PEAK_FORMULA,
        peaks={peak.dtype: peak for peak in peaks},
        points=tuple(points),
    )


def flops_formula(config: ExperimentConfig) -> str:
    """What `config`'s FLOP count covers, in words (its family's)."""
    return family(config).flops_formula

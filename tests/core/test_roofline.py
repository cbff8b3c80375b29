"""Roofline estimates: peak formula from flags and clock, FLOPs and bytes per forward."""

import os

import pytest
import torch

from autocast_explorer.core.sweeps.roofline import (
    arithmetic_intensity,
    build_roofline,
    bytes_moved,
    cpu_ghz,
    estimate_peak,
    linear_flops,
    physical_cores,
)

CLOCK = (3.0, "test")


def peak(dtype, *flags, vendor="GenuineIntel", threads=4, cores=4):
    return estimate_peak(dtype, threads, flags=flags, ghz=CLOCK, vendor=vendor, cores=cores)


def test_float32_peak_from_simd_width():
    p = peak("float32", "avx512f", "avx2", "fma")
    assert (p.lanes, p.fma_units, p.isa) == (16, 2, "avx512f")
    assert p.gflops == pytest.approx(4 * 3.0 * 16 * 2 * 2)
    assert p.formula == "4 cores × 3.00 GHz × 16 lanes × 2 FMA units × 2 = 768 GFLOP/s (estimate)"
    amd = peak("float32", "avx512f", vendor="AuthenticAMD")
    assert amd.fma_units == 1 and amd.gflops == pytest.approx(384)
    avx2 = peak("float32", "avx2", "fma")
    assert (avx2.lanes, avx2.fma_units) == (8, 2)
    assert peak("float32").lanes == 4


def test_low_precision_peaks_follow_native_flags():
    bf16 = peak("bfloat16", "avx512f", "avx512_bf16")
    assert (bf16.lanes, bf16.isa, bf16.native) == (32, "avx512_bf16", True)
    assert bf16.gflops == pytest.approx(2 * peak("float32", "avx512f").gflops)
    amx = peak("bfloat16", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile")
    assert (amx.lanes, amx.fma_units, amx.isa) == (1024, 1, "amx_bf16")
    emulated = peak("bfloat16", "avx2", "fma")
    assert emulated.native is False
    assert emulated.gflops == peak("float32", "avx2", "fma").gflops
    assert emulated.note.startswith("no native bfloat16: converted and computed as float32")
    fp16 = peak("float16", "avx512f", "avx512_fp16")
    assert (fp16.lanes, fp16.native) == (32, True)


def test_cores_are_capped_by_physical_cores():
    assert peak("float32", "avx2", "fma", threads=8, cores=2).cores == 2
    assert peak("float32", "avx2", "fma", threads=1, cores=2).cores == 1


def test_clock_sources(tmp_path):
    freq = tmp_path / "max_freq"
    info = tmp_path / "cpuinfo"
    info.write_text("processor: 0\ncpu MHz\t\t: 2596.142\nprocessor: 1\ncpu MHz\t: 2800.0\n")
    assert cpu_ghz(info, freq) == (
        2.8,
        "/proc/cpuinfo 'cpu MHz' (current clock; boost may be higher)",
    )
    freq.write_text("3700000\n")
    assert cpu_ghz(info, freq) == (3.7, "cpufreq cpuinfo_max_freq (maximum clock)")
    assert cpu_ghz(tmp_path / "none", tmp_path / "none")[0] == 0.0


def test_physical_cores_count_distinct_cores(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text(
        "physical id: 0\ncore id: 0\n\nphysical id: 0\ncore id: 0\n\n"
        "physical id: 0\ncore id: 1\n\nphysical id: 1\ncore id: 0\n"
    )
    assert physical_cores(info) == 3
    # Without /proc/cpuinfo (macOS, Windows) torch's count of physical cores is used.
    torch_count = torch.cpu.get_capabilities().get("num_physical_cores")
    assert physical_cores(tmp_path / "missing") == (torch_count or os.cpu_count())


def test_flops_and_bytes_per_forward():
    widths, batch = (32, 16, 4), 8
    assert linear_flops(widths, batch) == 2 * 8 * (32 * 16 + 16 * 4) == 9216
    params = 32 * 16 + 16 + 16 * 4 + 4
    activations = 8 * (32 + 16 + 4)
    assert bytes_moved(widths, batch, None) == 4 * (params + activations)
    assert bytes_moved(widths, batch, "bfloat16") == 2 * (params + activations) + 6 * (
        params + 8 * 32
    )
    assert arithmetic_intensity(widths, batch, None) == pytest.approx(
        9216 / (4 * (params + activations))
    )


def test_roofline_points_and_the_note_when_a_point_beats_the_estimate():
    peaks = (peak("float32", "avx2", "fma"), peak("bfloat16", "avx2", "fma"))
    roof = build_roofline("bfloat16", 4, [(8, (32, 16, 4), 8, 10.0, 500.0)], peaks=peaks)
    plain, auto = roof.points
    assert (plain.mode, plain.dtype, auto.dtype) == ("plain", "float32", "bfloat16")
    assert plain.intensity == pytest.approx(arithmetic_intensity((32, 16, 4), 8, None))
    assert roof.above_estimate == (auto,)  # 500 GFLOP/s > 4·3·8·2·2 = 384
    assert roof.note.startswith("1 point(s) beat the estimated peak (best: 500 vs 384 GFLOP/s")
    assert roof.to_dict()["peaks"]["float32"]["estimate"] is True

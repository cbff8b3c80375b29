"""Flags from torch.cpu.get_capabilities(), /proc/cpuinfo only as a fallback, and an override."""

import os

import torch

from autocast_explorer.core.hardware.capabilities import (
    FLAGS_ENV,
    capabilities_from,
    native_support,
    normalize,
    parse_flags,
    read_cpuinfo,
)
from autocast_explorer.core.hardware.cpu import LOW_PRECISION_FLAGS, environment
from autocast_explorer.core.hardware.midr import midr_name


def test_torch_names_are_spelled_as_cpuinfo_spells_them():
    flags = normalize({"avx512_f": True, "fma3": True, "neon": True, "fp16_arith": True, "x": 0})
    assert {"avx512f", "fma", "asimd", "fphp", "asimdhp", "avx512_f"} <= flags
    assert "x" not in flags  # numbers (cache sizes, core counts) are not flags


def test_this_machines_flags_come_from_torch():
    env = environment()
    override = os.environ.get(FLAGS_ENV, "").strip()
    expected = parse_flags(override) if override else normalize(torch.cpu.get_capabilities())
    assert set(env.cpu_flags) == {f for f in LOW_PRECISION_FLAGS if f in expected}
    assert env.native_bf16 == native_support(expected, "bfloat16").native
    assert env.extra["flags_source"] in (
        "torch.cpu.get_capabilities()",
        f"{FLAGS_ENV} (overrides torch.cpu.get_capabilities())",
    )


def test_cpuinfo_only_where_torch_has_no_answer(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("model name\t: Some CPU\nflags\t\t: fpu avx2 fma avx512_bf16\n")
    read = read_cpuinfo(info)
    assert read == ("Some CPU", frozenset({"fpu", "avx2", "fma", "avx512_bf16"}))
    fallback = capabilities_from(None, read, None)
    assert (fallback.source, fallback.name) == ("/proc/cpuinfo", "Some CPU")
    assert native_support(fallback.flags, "bfloat16").present == ("avx512_bf16",)
    from_torch = capabilities_from({"avx2": True, "cpu_name": "Torch CPU"}, ("", frozenset()), None)
    assert from_torch.source == "torch.cpu.get_capabilities()" and from_torch.flags == {"avx2"}
    assert from_torch.name == "Torch CPU"
    assert read_cpuinfo(tmp_path / "missing")[1] == frozenset()


def test_the_override_replaces_only_the_flags():
    caps = capabilities_from(
        {"avx512_bf16": True, "amx_bf16": True, "cpu_name": "Xeon", "num_physical_cores": 8},
        ("", frozenset()),
        "avx2, fma",
    )
    assert caps.flags == {"avx2", "fma"}
    assert caps.source == f"{FLAGS_ENV} (overrides torch.cpu.get_capabilities())"
    assert (caps.name, caps.physical_cores) == ("Xeon", 8)
    assert capabilities_from({"avx2": True}, ("", frozenset()), "  ").flags == {"avx2"}


def test_the_native_rule_names_the_unit_and_what_runs_instead():
    amx = native_support({"amx_bf16", "avx512_bf16", "avx2"}, "bfloat16")
    assert (amx.native, amx.unit, amx.present_text) == (
        True,
        "AMX (amx_bf16)",
        "amx_bf16, avx512_bf16",
    )
    assert amx.instead == ""
    avx2 = native_support({"avx2", "fma"}, "bfloat16")
    assert not avx2.native and avx2.present == () and avx2.unit == ""
    assert avx2.lacks == "bfloat16 multiply instructions: neither AMX tiles nor AVX-512 BF16"
    assert avx2.instead.startswith("every bfloat16 matrix product converts its operands")
    arm = native_support({"asimd", "asimdhp"}, "float16")
    assert (arm.native, arm.unit) == (True, "Arm half-precision arithmetic")
    assert native_support(set(), "float32").native


def test_what_a_cpu_lacks_is_said_in_words_for_its_architecture():
    arm = native_support({"asimd", "asimdhp", "fphp"}, "bfloat16")
    assert arm.lacks == (
        "bfloat16 multiply instructions: not the Armv8.6 BF16 extension (BFDOT, BFMMLA)"
    )
    x86_fp16 = native_support({"avx512f", "avx2", "fma"}, "float16")
    assert x86_fp16.lacks == "float16 arithmetic instructions: neither AMX-FP16 nor AVX-512 FP16"
    unknown = native_support(set(), "bfloat16")
    assert unknown.lacks.startswith("bfloat16 multiply instructions: neither x86's AMX")
    for support in (arm, x86_fp16, unknown):
        assert not any(flag in support.lacks for flag in ("amx_bf16", "svebf16", " / "))
    assert native_support({"asimd", "bf16"}, "bfloat16").lacks == ""


def test_arm_names_its_core_from_midr(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text(
        "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm crc32 atomics\n"
        "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x4\n"
        "CPU part\t: 0xd0c\nCPU revision\t: 1\n"
    )
    name, flags = read_cpuinfo(info)
    assert name == "Arm Neoverse-N1" and "asimd" in flags
    # torch's "Unknown" gives way to the MIDR name; a name torch knows is kept where
    # /proc/cpuinfo has none.
    caps = capabilities_from({"neon": True, "cpu_name": "Unknown"}, (name, frozenset()), None)
    assert caps.name == "Arm Neoverse-N1"
    apple = capabilities_from({"neon": True, "cpu_name": "Apple M2"}, ("", frozenset()), None)
    assert apple.name == "Apple M2"
    assert midr_name("0x61", "0x048") == "Apple core, part 0x048"
    assert midr_name("0x00", "0x051").startswith("Arm core (implementer 0: reserved")
    assert midr_name("0x41", "0xd4f") == "Arm Neoverse-V2"
    assert midr_name("?", "0xd0c") == ""

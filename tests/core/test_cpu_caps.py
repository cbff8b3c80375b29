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
    assert avx2.instead.startswith("without amx_bf16 / avx512_bf16 / bf16 / svebf16 the CPU")
    arm = native_support({"asimd", "asimdhp"}, "float16")
    assert (arm.native, arm.unit) == (True, "Arm half-precision arithmetic")
    assert native_support(set(), "float32").native

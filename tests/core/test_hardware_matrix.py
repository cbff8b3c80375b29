"""Every CPU kind the explorer meets, simulated: what each view says on each.

The capabilities are what torch.cpu.get_capabilities() reports on each kind (x86 and Arm
names). The Arm kinds marked "captured" are not written by hand: tests/core/arm_capabilities.json
holds what torch 2.13's get_capabilities() and the kernel's /proc/cpuinfo (all torch 2.10 has)
reported under four emulated Arm CPUs (bench/arm_matrix.py --fixtures). One live run on this
machine supplies the measured parts, with its environment replaced by the simulated one and its
latencies set to what such a CPU measures. Verdict, roofline peaks, summary, lesson text and
compare table must then say what fits that kind, whichever CPU runs this test.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from autocast_explorer.core.experiment.certainty import TimingEvidence
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.interval import SpeedupInterval
from autocast_explorer.core.experiment.summary import format_summary, hardware_clause, verdict
from autocast_explorer.core.hardware.capabilities import (
    capabilities_from,
    native_support,
    read_cpuinfo,
)
from autocast_explorer.core.hardware.cpu import environment
from autocast_explorer.core.hardware.onednn import OneDnnKernel, OneDnnProbe
from autocast_explorer.core.learning.compare import compare_results, comparison_table
from autocast_explorer.core.learning.lessons import lesson
from autocast_explorer.core.sweeps.roofline import estimate_peak
from autocast_explorer.core.sweeps.verdict import (
    ARM_VERDICT_FLAGS,
    VERDICT_FLAGS,
    hardware_verdict,
)
from tests.edits import edited, retimed

X86_BASE = {"architecture": "x86_64", "sse4_2": True, "avx": True, "avx2": True, "fma3": True}
AVX512 = {"avx512_f": True, "avx512_bw": True, "avx512_vl": True, "avx512_vnni": True}
ARM_BASE = {"architecture": "aarch64", "neon": True, "fp16_arith": True, "dot": True}


@dataclass(frozen=True)
class Kind:
    """One simulated CPU kind and what every view must say about bfloat16 on it."""

    name: str
    vendor: str
    caps: dict
    torch_bf16: bool
    speedup: float  # what autocast measured there at the tutorial config
    gemm: str  # the oneDNN implementation its bf16 GEMM ran as ('' = none, torch's own)
    clause: str  # verdict's hardware clause
    native: str  # compare table's "native low precision"
    peak: tuple[int, int, str]  # bf16 roofline: lanes, FMA units, ISA
    fp16_native: bool
    #: /proc/cpuinfo as read_cpuinfo gives it (name, flags); captured kinds only.
    cpuinfo: tuple[str, frozenset[str]] = ("", frozenset())
    cpu_name: str = ""  # the name the explorer must show ('' = whatever torch said)
    vector_bits: int = 0  # SVE vector length (Arm)
    arch: str = "x86"
    capability: str = ""  # torch.backends.cpu.get_cpu_capability() there ('' = this machine's)


X86_LACKS = "bfloat16 multiply instructions: neither AMX tiles nor AVX-512 BF16"
ARM_LACKS = "bfloat16 multiply instructions: not the Armv8.6 BF16 extension (BFDOT, BFMMLA)"


KINDS = (
    Kind(
        "AVX2 only (Zen 3)",
        "AuthenticAMD",
        {**X86_BASE, "cpu_name": "AMD EPYC 7B13"},
        False,
        0.15,
        "",
        "No native bfloat16 on this CPU",
        "no",
        (8, 2, "avx2+fma"),
        False,
    ),
    Kind(
        "AVX-512 without bf16 (Cascade Lake)",
        "GenuineIntel",
        {**X86_BASE, **AVX512, "cpu_name": "Intel Xeon Gold 6248"},
        True,
        0.3,
        "gemm:jit:bf16",
        "No native bfloat16 on this CPU (torch's oneDNN reports it supported: emulated)",
        "no",
        (16, 2, "avx512f"),
        False,
    ),
    Kind(
        "avx512_bf16 (Zen 4)",
        "AuthenticAMD",
        {**X86_BASE, **AVX512, "avx512_bf16": True, "cpu_name": "AMD EPYC 9354"},
        True,
        1.2,
        "brg_matmul:avx512_core_bf16",
        "avx512_bf16 present",
        "yes (avx512_bf16)",
        (32, 1, "avx512_bf16"),
        False,
    ),
    Kind(
        "AMX (Sapphire Rapids)",
        "GenuineIntel",
        {
            **X86_BASE,
            **AVX512,
            "avx512_bf16": True,
            "avx512_fp16": True,
            "amx_bf16": True,
            "amx_tile": True,
            "cpu_name": "Intel Xeon Platinum 8480+",
        },
        True,
        2.5,
        "brg_matmul:avx512_core_amx",
        "AMX (amx_bf16) present",
        "yes (amx_bf16, avx512_bf16)",
        (1024, 1, "amx_bf16"),
        True,
    ),
    Kind(
        "Arm Neoverse V1 with bf16 (Graviton3)",
        "",
        {**ARM_BASE, "bf16": True, "sve": True, "sve_bf16": True, "i8mm": True},
        True,
        1.1,
        "brg_matmul:sve_256",
        "Arm bf16 present",
        "yes (bf16, svebf16)",
        (16, 2, "svebf16"),  # 256-bit SVE, BFDOT: 16 bf16 products per op, 2 pipes
        True,
        cpuinfo=("Arm Neoverse-V1", frozenset()),
        vector_bits=256,
        arch="arm",
        capability="SVE256",
    ),
    Kind(
        "Apple M-series (M2)",
        "",
        {**ARM_BASE, "bf16": True, "i8mm": True, "cpu_name": "Apple M2"},
        False,
        0.9,
        "",
        "Arm bf16 present",
        "yes (bf16)",
        (8, 4, "bf16"),  # 128-bit NEON, 4 FMA pipes on the performance cores
        True,
        arch="arm",
        capability="DEFAULT",
    ),
)

ARM_FIXTURE = Path(__file__).with_name("arm_capabilities.json")
#: What each emulated model is, said independently of the explorer (qemu's models): name,
#: native bf16 as the compare table words it, the bf16 roofline (lanes, units, ISA), native
#: fp16, the speedup to simulate and the oneDNN GEMM its bf16 matmul ran as.
ARM_EXPECTED: dict[str, tuple[str, str, tuple[int, int, str], bool, float, str]] = {
    "neoverse-n1": ("Arm Neoverse-N1", "no", (4, 2, "neon"), True, 0.4, ""),
    "max,sve-max-vq=2": ("", "yes (bf16, svebf16)", (16, 2, "svebf16"), True, 1.1, "gemm:acl"),
    "max,sve=off": ("", "yes (bf16)", (8, 2, "bf16"), True, 1.1, "gemm:acl"),
    "max": ("", "yes (bf16, svebf16)", (32, 2, "svebf16"), True, 1.1, "brg:sve_512"),
}
QEMU_MAX_NAME = "Arm core (implementer 0: reserved for software use, e.g. an emulator)"


def cpuinfo_text(info: dict) -> str:
    """The captured fields back in /proc/cpuinfo's format (two processors)."""
    block = (
        f"processor\t: {{n}}\nBogoMIPS\t: 50.00\nFeatures\t: {info['Features']}\n"
        f"CPU implementer\t: {info['CPU implementer']}\nCPU architecture: 8\n"
        f"CPU part\t: {info['CPU part']}\nCPU revision\t: 0\n"
    )
    return "\n".join(block.format(n=n) for n in range(2))


def captured_kinds(tmp: Path) -> tuple[Kind, ...]:
    """One Kind per captured model and torch version, its /proc/cpuinfo read by read_cpuinfo."""
    kinds = []
    for model, data in json.loads(ARM_FIXTURE.read_text())["kinds"].items():
        name, native, peak, fp16, speedup, gemm = ARM_EXPECTED[model]
        path = tmp / f"cpuinfo-{re.sub(r'[^a-z0-9]', '_', model)}"
        path.write_text(cpuinfo_text(data["cpuinfo"]))
        bf16 = native != "no"
        for version, seen in sorted(data["torch"].items()):
            emulated = " (torch's oneDNN reports it supported: emulated)"
            clause = "Arm bf16 present" if bf16 else "No native bfloat16 on this CPU"
            if not bf16 and seen["mkldnn_bf16"]:
                clause += emulated
            kinds.append(
                Kind(
                    f"captured {model}, torch {version}",
                    "",
                    seen["get_capabilities"],
                    bool(seen["mkldnn_bf16"]),
                    speedup,
                    gemm if bf16 else "",
                    clause,
                    native,
                    peak,
                    fp16,
                    cpuinfo=read_cpuinfo(path),
                    cpu_name=name or QEMU_MAX_NAME,
                    vector_bits=int(data.get("sve_vector_bits", 0)),
                    arch="arm",
                    capability=seen["cpu_capability"],
                )
            )
    return tuple(kinds)


with tempfile.TemporaryDirectory(prefix="arm-cpuinfo-") as _folder:
    CAPTURED = captured_kinds(Path(_folder))
KINDS = KINDS + CAPTURED
IDS = [k.name for k in KINDS]
PLAIN_GFLOPS = 60.0


@pytest.fixture(scope="module")
def live():
    """One measured run of the tutorial config on this machine (dtypes, agreement, layers)."""
    return run_experiment(ExperimentConfig(min_time=0.02))


def simulated_env(kind: Kind):
    caps = capabilities_from(kind.caps, kind.cpuinfo, None)
    env = environment(2, caps=caps)
    env = env.model_copy(update={"torch_bf16_supported": kind.torch_bf16})
    return env.model_copy(update={"cpu_capability": kind.capability}) if kind.capability else env


def simulated_result(live, kind: Kind):
    """The live run as that CPU kind would have measured it (float32 at PLAIN_GFLOPS)."""
    plain_ms = live.flops / (PLAIN_GFLOPS * 1e9) * 1e3
    return retimed(
        edited(live, environment=simulated_env(kind)),
        plain=edited(live.plain, median_ms=plain_ms),
        autocast=edited(live.autocast, median_ms=plain_ms / kind.speedup),
        # A quiet machine's interval: ±1% around the speedup.
        evidence=TimingEvidence(
            interval=SpeedupInterval(
                low=kind.speedup / 1.01, high=kind.speedup * 1.01, level=0.95, pairs=30
            ),
            stopped="precise",
        ),
    )


def simulated_probe(kind: Kind) -> OneDnnProbe:
    gemm = OneDnnKernel(
        primitive="matmul",
        implementation=kind.gemm,
        src_dtype="bfloat16",
        problem="128x256:256x256",
    )
    return OneDnnProbe(
        dtype="bfloat16",
        available=True,
        captured=True,
        version="3.7.1",
        autocast_kernels=(gemm,) if kind.gemm else (),
        float32_kernels=(),
        summary="",
    )


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_capabilities_and_the_native_rule(kind):
    env = simulated_env(kind)
    support = native_support(env.cpu_flags, "bfloat16")
    assert env.native_bf16 is support.native is kind.native.startswith("yes")
    assert env.native_fp16 is kind.fp16_native
    source = "torch.cpu.get_capabilities()" if kind.caps is not None else "/proc/cpuinfo"
    assert env.extra["flags_source"] == source
    if kind.cpu_name:
        assert env.cpu_model.startswith(kind.cpu_name)
    elif "cpu_name" in kind.caps:
        assert env.cpu_model == kind.caps["cpu_name"]
    if kind.cpuinfo[1]:  # captured: torch's flags and the kernel's agree on the native rule
        kernel = native_support(kind.cpuinfo[1], "bfloat16")
        assert kernel.native is support.native is ("bf16" in kind.cpuinfo[1])


def test_the_captured_arm_models_are_all_here():
    models = {k.name.split(", torch")[0].removeprefix("captured ") for k in CAPTURED}
    assert models == set(ARM_EXPECTED)
    versions = {k.name.rsplit("torch ", 1)[1] for k in CAPTURED}
    assert versions == {"2.13.0", "2.10.0"}
    # torch 2.13 answers through get_capabilities(); 2.10 has no such function.
    assert all((k.caps is None) is k.name.endswith("2.10.0") for k in CAPTURED)


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_verdict_says_what_ran_and_why(kind):
    env = simulated_env(kind)
    rates = (PLAIN_GFLOPS, PLAIN_GFLOPS * kind.speedup)
    v = hardware_verdict(
        env, "bfloat16", "batch", [128], [kind.speedup], simulated_probe(kind), rates=rates
    )
    assert v.hardware == kind.clause
    assert v.sentence.startswith(f"{kind.clause}: autocast ran")
    shown = ARM_VERDICT_FLAGS if kind.arch == "arm" else VERDICT_FLAGS
    assert v.flags == {flag: flag in env.cpu_flags for flag in shown}
    if kind.arch == "arm":
        assert not re.search(r"AMX|AVX|amx|avx", v.sentence)
    if v.native:
        assert v.instead == ""
        return
    rate_text = f"{rates[1]:,.1f} GFLOP/s under autocast against {rates[0]:,.1f} GFLOP/s"
    if kind.gemm:
        assert v.instead.startswith(f"oneDNN emulated the bfloat16 GEMMs ({kind.gemm})")
    else:
        assert v.instead.startswith(
            "each bfloat16 GEMM was a conversion plus a kernel outside oneDNN"
        )
    assert rate_text in v.instead and v.instead in v.sentence
    assert f"{1 / kind.speedup:.2g}× slower" in v.sentence


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_roofline_peaks(kind):
    env = simulated_env(kind)
    ghz = (3.0, "test")
    where = {"core": env.cpu_model, "vector_bits": kind.vector_bits}
    f32 = estimate_peak("float32", 2, env.cpu_flags, ghz, kind.vendor, cores=2, **where)
    bf16 = estimate_peak("bfloat16", 2, env.cpu_flags, ghz, kind.vendor, cores=2, **where)
    assert (bf16.lanes, bf16.fma_units, bf16.isa) == kind.peak
    assert bf16.native is env.native_bf16
    assert bf16.gflops == pytest.approx(2 * 3.0 * kind.peak[0] * kind.peak[1] * 2)
    if not env.native_bf16:
        assert bf16.gflops == f32.gflops
        assert bf16.note.startswith("no native bfloat16: converted and computed as float32")


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_summary_and_lesson_text(live, kind):
    result = simulated_result(live, kind)
    support = native_support(result.environment.cpu_flags, "bfloat16")
    clause = hardware_clause(result)
    if support.native:
        assert clause == f"this CPU has native bfloat16 ({support.present_text})"
    else:
        lacks = ARM_LACKS if kind.arch == "arm" else X86_LACKS
        assert clause == f"this CPU has no native bfloat16 (it lacks {lacks})"
    sentence = verdict(result)
    pace = "faster" if kind.speedup > 1.05 else "slower" if kind.speedup < 1 / 1.05 else "same"
    interval = result.evidence.interval
    if pace == "faster":
        assert sentence.startswith(
            f"autocast was {kind.speedup:.2f}× faster here ({interval.text()}); {clause}"
        )
    elif pace == "slower":
        assert sentence.startswith(
            f"autocast was {1 / kind.speedup:.2f}× slower here ({interval.slower_text()}); {clause}"
        )
    outcome = lesson("timing").check(result)
    assert f"For the record, {clause}." in outcome.text
    instead = "So nothing here multiplies bfloat16 natively"
    assert (instead in outcome.text) is (not support.native)
    if not support.native:
        assert (
            f"at {result.gflops('autocast'):,.1f} GFLOP/s against {PLAIN_GFLOPS:,.1f} GFLOP/s"
        ) in outcome.text
    assert outcome.matches_tutorial is (pace == "slower")
    summary = format_summary(result)
    assert f"Verdict: {sentence}" in summary
    assert ("What ran instead: every bfloat16 matrix product" in summary) is (not support.native)
    other = r"\bArm\b" if kind.arch == "x86" else r"AMX|AVX|amx_|avx"
    for text in (summary, outcome.text):
        assert not re.search(other, text), text


def test_compare_table_across_every_kind(live):
    results = [simulated_result(live, kind) for kind in KINDS]
    comparison = compare_results(results, [f"{k.name}.json" for k in KINDS])
    rows = comparison.rows()
    assert [r.native_low_precision for r in rows] == [k.native for k in KINDS]
    table = dict(comparison_table(comparison))
    assert table["native low precision"] == [k.native for k in KINDS]
    for row, speed, kind in zip(rows, table["speedup"], KINDS, strict=True):
        assert row.speedup == pytest.approx(kind.speedup)
        assert speed.startswith(f"{kind.speedup:.2f}×")

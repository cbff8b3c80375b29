"""Every CPU kind the explorer meets, simulated: what each view says on each.

The capabilities are what torch.cpu.get_capabilities() reports on each kind (x86 and Arm
names); one live run on this machine supplies the measured parts, with its environment
replaced by the simulated one and its latencies set to what such a CPU measures. Verdict,
roofline peaks, summary, lesson text and compare table must then say what fits that kind,
whichever CPU runs this test.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from autocast_explorer.core.experiment.certainty import TimingEvidence
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.interval import SpeedupInterval
from autocast_explorer.core.experiment.summary import format_summary, hardware_clause, verdict
from autocast_explorer.core.hardware.capabilities import capabilities_from, native_support
from autocast_explorer.core.hardware.cpu import environment
from autocast_explorer.core.hardware.onednn import OneDnnKernel, OneDnnProbe
from autocast_explorer.core.learning.compare import compare_results, comparison_table
from autocast_explorer.core.learning.lessons import lesson
from autocast_explorer.core.sweeps.roofline import estimate_peak
from autocast_explorer.core.sweeps.verdict import hardware_verdict

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
        (8, 2, "bf16"),
        True,
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
        (8, 2, "bf16"),
        True,
    ),
)
IDS = [k.name for k in KINDS]
PLAIN_GFLOPS = 60.0


@pytest.fixture(scope="module")
def live():
    """One measured run of the tutorial config on this machine (dtypes, agreement, layers)."""
    return run_experiment(ExperimentConfig(min_time=0.02))


def simulated_env(kind: Kind):
    caps = capabilities_from(kind.caps, ("", frozenset()), None)
    env = environment(2, caps=caps)
    return dataclasses.replace(env, torch_bf16_supported=kind.torch_bf16)


def simulated_result(live, kind: Kind):
    """The live run as that CPU kind would have measured it (float32 at PLAIN_GFLOPS)."""
    plain_ms = live.flops / (PLAIN_GFLOPS * 1e9) * 1e3
    return dataclasses.replace(
        live,
        environment=simulated_env(kind),
        plain=dataclasses.replace(live.plain, median_ms=plain_ms),
        autocast=dataclasses.replace(live.autocast, median_ms=plain_ms / kind.speedup),
        # A quiet machine's interval: ±1% around the speedup.
        evidence=TimingEvidence(
            SpeedupInterval(kind.speedup / 1.01, kind.speedup * 1.01, 0.95, 30), stopped="precise"
        ),
    )


def simulated_probe(kind: Kind) -> OneDnnProbe:
    kernels = (
        (OneDnnKernel("matmul", kind.gemm, "bfloat16", "128x256:256x256"),) if kind.gemm else ()
    )
    return OneDnnProbe("bfloat16", True, True, "3.7.1", None, autocast_kernels=kernels)


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_capabilities_and_the_native_rule(kind):
    env = simulated_env(kind)
    support = native_support(env.cpu_flags, "bfloat16")
    assert env.native_bf16 is support.native is kind.native.startswith("yes")
    assert env.native_fp16 is kind.fp16_native
    assert env.extra["flags_source"] == "torch.cpu.get_capabilities()"
    if "cpu_name" in kind.caps:
        assert env.cpu_model == kind.caps["cpu_name"]


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_verdict_says_what_ran_and_why(kind):
    env = simulated_env(kind)
    rates = (PLAIN_GFLOPS, PLAIN_GFLOPS * kind.speedup)
    v = hardware_verdict(
        env, "bfloat16", "batch", [128], [kind.speedup], simulated_probe(kind), rates=rates
    )
    assert v.hardware == kind.clause
    assert v.sentence.startswith(f"{kind.clause}: autocast ran")
    if v.native:
        assert v.instead == ""
        return
    rate_text = f"{rates[1]:,.1f} GFLOP/s under autocast against {rates[0]:,.1f} GFLOP/s"
    if kind.gemm:
        assert v.instead.startswith(f"oneDNN emulated the bfloat16 GEMMs ({kind.gemm})")
    else:
        assert v.instead.startswith(
            "each bfloat16 GEMM was a conversion plus torch's own kernels (oneDNN ran no GEMM"
        )
    assert rate_text in v.instead and v.instead in v.sentence
    assert f"{1 / kind.speedup:.2g}× slower" in v.sentence


@pytest.mark.parametrize("kind", KINDS, ids=IDS)
def test_roofline_peaks(kind):
    env = simulated_env(kind)
    ghz = (3.0, "test")
    f32 = estimate_peak("float32", 2, env.cpu_flags, ghz, kind.vendor, cores=2)
    bf16 = estimate_peak("bfloat16", 2, env.cpu_flags, ghz, kind.vendor, cores=2)
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
        assert (
            clause == "this CPU has no native bfloat16 (no amx_bf16 / avx512_bf16 / bf16 / svebf16)"
        )
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
    assert ("What ran instead: without " in summary) is (not support.native)


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

"""What the AVX2 emulation switches change on a native-bf16 machine, measured side by side.

Run once per environment, e.g.
  ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 AUTOCAST_EXPLORER_CPU_FLAGS=avx2,fma \
      python bench/avx2_emulation.py
and compare with a plain run: the bf16 F.linear rate against float32, the kernel oneDNN ran,
the flags torch reports and the tutorial config's two medians. Prints Markdown lines.
"""

from __future__ import annotations

import os
import statistics
import time

import torch
import torch.nn.functional as F

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.model import build
from autocast_explorer.core.hardware import onednn

SWITCHES = (
    "ONEDNN_MAX_CPU_ISA",
    "DNNL_MAX_CPU_ISA",
    "ATEN_CPU_CAPABILITY",
    "AUTOCAST_EXPLORER_CPU_FLAGS",
)


def linear_gflops(batch: int, width: int, dtype: torch.dtype | None, calls: int = 7) -> float:
    """Median GFLOP/s of F.linear(batch × width → width), under autocast when `dtype`."""
    x = torch.randn(batch, width)
    w = torch.randn(width, width)
    b = torch.randn(width)
    times = []
    with torch.no_grad():
        for _ in range(calls):
            start = time.perf_counter()
            if dtype is None:
                F.linear(x, w, b)
            else:
                with torch.autocast("cpu", dtype=dtype):
                    F.linear(x, w, b)
            times.append(time.perf_counter() - start)
    return 2 * batch * width * width / statistics.median(times[1:]) / 1e9


def main() -> None:
    torch.set_num_threads(1)
    switches = ", ".join(f"{k}={os.environ[k]}" for k in SWITCHES if k in os.environ) or "none"
    caps = torch.cpu.get_capabilities()
    print(f"#### switches: {switches} (load {os.getloadavg()[0]:.2f})")
    print(
        f"- torch capability {torch.backends.cpu.get_cpu_capability()}; get_capabilities "
        f"avx512_bf16={caps.get('avx512_bf16')} amx_bf16={caps.get('amx_bf16')}; "
        f"mkldnn bf16 supported={torch.ops.mkldnn._is_mkldnn_bf16_supported()}"
    )
    for batch, width in ((256, 1024), (128, 256)):
        f32 = linear_gflops(batch, width, None)
        bf16 = linear_gflops(batch, width, torch.bfloat16)
        print(
            f"- F.linear batch {batch}, {width}→{width}, 1 thread: float32 {f32:.1f} GFLOP/s, "
            f"bfloat16 autocast {bf16:.1f} GFLOP/s ({f32 / bf16:.2f}× slower)"
        )
    config = ExperimentConfig(min_time=0.3, threads=1)
    result = run_experiment(config)
    print(
        f"- tutorial config (256,256,256,10, batch 128, 1 thread): float32 "
        f"{result.plain.median_ms:.3f} ms, autocast {result.autocast.median_ms:.3f} ms "
        f"(speedup {result.speedup:.2f}×)"
    )
    model, x = build(config)
    probe = onednn.probe(model, x, torch.bfloat16)
    kernels = sorted({k.implementation for k in probe.autocast_kernels})
    print(f"- oneDNN isa line: {probe.cpu_isa}; bf16 kernels: {', '.join(kernels) or 'none'}")
    print(f"- {probe.summary}")


if __name__ == "__main__":
    main()

"""Eager autocast, torch.compile and oneDNN's implicit bf16 on the MLP, CNN and transformer
defaults, natively and under the AVX2 emulation switches (`make test-as-avx2`'s).

  python bench/routes.py                      # both environments, 1 thread, 0.5 s per side
  python bench/routes.py --env native --models mlp --min-time 0.05   # a smoke run

Each environment runs in its own process (the switches act when torch loads). Prints Markdown:
one table per environment, a row per model and route, then each route's finding. Compile
seconds include inductor's C++ build: the first compile of a process (and of a new graph on a
machine) is the cold one; later identical graphs hit inductor's on-disk cache.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

AVX2_SWITCHES = {
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "ATEN_CPU_CAPABILITY": "avx2",
    "AUTOCAST_EXPLORER_CPU_FLAGS": "avx2,fma",
}
MODELS = ("mlp", "cnn", "transformer")


def measure(models: list[str], min_time: float, threads: int) -> None:
    """Run every model with all three routes in this process; print its table."""
    import math

    import torch

    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.experiment.engine import run_experiment

    switches = ", ".join(f"{k}={os.environ[k]}" for k in AVX2_SWITCHES if k in os.environ)
    print(
        f"#### {switches or 'native'} · torch {torch.__version__} · "
        f"{torch.backends.cpu.get_cpu_capability()} · {threads} thread(s) · "
        f"min_time {min_time} s · load {os.getloadavg()[0]:.2f}\n"
    )
    print(
        "| model | route | float32 ms | lower ms | speedup | compile s | lower output | "
        "SQNR vs eager f32 | argmax agree |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    findings = []
    for model in models:
        config = ExperimentConfig(
            model=model,
            routes=("eager", "compiled", "implicit"),
            min_time=min_time,
            threads=threads,
        )
        result = run_experiment(config)
        for route in result.routes:
            error = route.error
            sqnr = (
                "—"
                if error is None
                else "identical"
                if error.identical
                else f"{error.sqnr_db:.1f} dB"
            )
            cells = [
                model,
                route.name,
                "—" if route.plain is None else f"{route.plain.median_ms:.4g}",
                "—" if route.lower is None else f"{route.lower.median_ms:.4g}",
                f"{route.speedup:.2f}×" if math.isfinite(route.speedup) else "—",
                "—" if route.compile_s is None else f"{route.compile_s:.1f}",
                route.output_dtype.get("lower", "—"),
                sqnr,
                "—" if route.agreement is None else f"{route.agreement.fraction:.1%}",
            ]
            print("| " + " | ".join(cells) + " |", flush=True)
            if route.finding:
                findings.append(f"- {model} · {route.name}: {route.finding}")
    print("\n" + "\n".join(findings) + "\n", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--env", choices=("both", "native", "avx2"), default="both")
    parser.add_argument("--models", default=",".join(MODELS), help="comma list of families")
    parser.add_argument("--min-time", type=float, default=0.5, help="seconds per side")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    if args.inner:
        measure(models, args.min_time, args.threads)
        return 0
    failed = 0
    cache_root = Path(tempfile.gettempdir()) / "autocast-explorer-bench"
    for env_name in ("native", "avx2") if args.env == "both" else (args.env,):
        env = dict(os.environ)
        for key in AVX2_SWITCHES:
            env.pop(key, None)
        if env_name == "avx2":
            env.update(AVX2_SWITCHES)
            # Its own inductor cache: reusing the native run's builds under the emulation
            # switches gave wrong compiled outputs here (float32 SQNR 3.9 dB, bf16 NaN).
            env.setdefault("TORCHINDUCTOR_CACHE_DIR", str(cache_root / "inductor-avx2"))
        command = [
            sys.executable,
            __file__,
            "--inner",
            "--models",
            ",".join(models),
            "--min-time",
            str(args.min_time),
            "--threads",
            str(args.threads),
        ]
        failed |= subprocess.run(command, env=env).returncode != 0
    return failed


if __name__ == "__main__":
    sys.exit(main())

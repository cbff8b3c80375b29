"""The guards against what the run then did: time to the guard's answer, forecast ÷ measured,
memory estimate ÷ measured peak rise, for a U-Net, DistilBERT with eager attention at sequence
2048, every built-in family, training mode and a routes run; natively and under the AVX2
emulation `make test-as-avx2` uses. Each case runs in a child process of its own (fresh
memory; its start is the clock's zero).

    .venv/bin/python bench/guards.py            # quiet machine: the figures for RESULTS.md
    .venv/bin/python bench/guards.py --tiny     # smoke run: tiny sizes, seconds, not figures
    .venv/bin/python bench/guards.py --empty-cache   # a fresh inductor cache for each case

Targets: the guard answers (a refusal, or the forecast) within 5 s of the process starting,
import torch included; the run's forecast within 3× of its wall time; the memory estimate
within 2× of the peak resident memory's rise during the run (`guard.memory_peak_mb`, Linux).
Prints Markdown: one table per environment. Not part of the test suite.
"""

from __future__ import annotations

import time

_STARTED = time.time()  # the child's zero, before torch is imported

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

UNET = """\
import torch
from torch import nn


def block(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1), nn.GroupNorm(8, cout), nn.SiLU(),
        nn.Conv2d(cout, cout, 3, padding=1), nn.GroupNorm(8, cout), nn.SiLU(),
    )


class UNet(nn.Module):
    def __init__(self, base, depth=4):
        super().__init__()
        widths = [base * 2**i for i in range(depth)]
        self.downs, self.ups, self.upconvs = nn.ModuleList(), nn.ModuleList(), nn.ModuleList()
        cin = 3
        for c in widths:
            self.downs.append(block(cin, c))
            cin = c
        self.mid = block(widths[-1], 2 * widths[-1])
        cin = 2 * widths[-1]
        for c in reversed(widths):
            self.upconvs.append(nn.ConvTranspose2d(cin, c, 2, stride=2))
            self.ups.append(block(2 * c, c))
            cin = c
        self.out = nn.Conv2d(widths[0], 3, 1)

    def forward(self, x):
        skips = []
        for down in self.downs:
            x = down(x)
            skips.append(x)
            x = nn.functional.max_pool2d(x, 2)
        x = self.mid(x)
        for upconv, up, skip in zip(self.upconvs, self.ups, reversed(skips)):
            x = up(torch.cat([upconv(x), skip], 1))
        return self.out(x)


def build(base=16, image=128):
    return UNet(base), torch.randn(1, 3, image, image)
"""

AVX2_ENV = {
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "ATEN_CPU_CAPABILITY": "avx2",
    "AUTOCAST_EXPLORER_CPU_FLAGS": "avx2,fma",
}
DISTILBERT = {
    "dim": 128,
    "n_heads": 16,
    "n_layers": 2,
    "hidden_dim": 256,
    "max_position_embeddings": 2048,
    "vocab_size": 1000,
    "attn_implementation": "eager",
}


def cases(unet: str, tiny: bool) -> list[tuple[str, dict]]:
    """(label, config fields) of every case; `tiny` shrinks each to seconds."""
    if tiny:
        bert = {**DISTILBERT, "n_layers": 1, "max_position_embeddings": 128}
        return [
            (
                "U-Net base 8, image 32, batch 2",
                {"model": unet, "batch": 2, "model_args": {"base": 8, "image": 32}},
            ),
            (
                "DistilBERT eager, seq 128, batch 2",
                {"model": "hf:distilbert", "batch": 2, "seq": 128, "model_args": bert},
            ),
            ("MLP (default)", {"model": "mlp"}),
            ("CNN (default)", {"model": "cnn"}),
            ("Transformer (default)", {"model": "transformer"}),
            ("RNN (default)", {"model": "rnn"}),
            ("CNN training, 3 steps", {"model": "cnn", "mode": "train", "steps": 3}),
            (
                "MLP, routes eager,compiled",
                {"model": "mlp", "widths": [32, 16, 4], "routes": ["eager", "compiled"]},
            ),
        ]
    return [
        (
            "U-Net base 16, image 128, batch 16",
            {"model": unet, "batch": 16, "model_args": {"base": 16, "image": 128}},
        ),
        (
            "DistilBERT eager, 16 heads, seq 2048, batch 2",
            {"model": "hf:distilbert", "batch": 2, "seq": 2048, "model_args": DISTILBERT},
        ),
        (
            "MLP 2048×3, batch 1024",
            {"model": "mlp", "widths": [2048, 2048, 2048, 10], "batch": 1024},
        ),
        ("CNN 3→32→64, image 64, batch 64", {"model": "cnn", "image": 64, "batch": 64}),
        (
            "Transformer d 256, seq 256, batch 32",
            {"model": "transformer", "d_model": 256, "seq": 256, "ff": 1024, "batch": 32},
        ),
        (
            "RNN LSTM hidden 512, seq 256, batch 64",
            {"model": "rnn", "hidden": 512, "seq": 256, "batch": 64},
        ),
        (
            "CNN training, image 64, batch 64, 20 steps",
            {"model": "cnn", "image": 64, "batch": 64, "mode": "train", "steps": 20},
        ),
        (
            "DistilBERT training, seq 512, batch 2",
            {
                "model": "hf:distilbert",
                "batch": 2,
                "seq": 512,
                "mode": "train",
                "steps": 5,
                "model_args": DISTILBERT,
            },
        ),
        (
            "U-Net base 8, image 64, batch 4, routes eager,compiled",
            {
                "model": unet,
                "batch": 4,
                "model_args": {"base": 8, "image": 64},
                "routes": ["eager", "compiled"],
            },
        ),
    ]


def child(fields: dict, min_time: float) -> dict:
    """One case in this (fresh) process: the guard's answer, then the run if it was allowed."""
    from autocast_explorer.core.experiment import guards
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.experiment.engine import run_experiment
    from autocast_explorer.core.experiment.forecast import forecast

    config = ExperimentConfig(**fields, min_time=min_time)
    try:
        estimate = guards.check_estimate(config)
    except guards.GuardError as exc:
        return {"answer_s": time.time() - _STARTED, "refused": str(exc)}
    ahead = forecast(config, estimate)
    answer_s = time.time() - _STARTED
    start = time.perf_counter()
    result = run_experiment(config)
    wall = time.perf_counter() - start
    guard = result.guard
    assert guard is not None
    return {
        "answer_s": answer_s,
        "forecast_s": ahead.seconds,
        "at_most_s": ahead.at_most_s,
        "wall_s": wall,
        # A training run times steps: the guard's step (its traced ops, or 3 forwards).
        "forward_ratio": (
            guard.step_seconds() * 1e3 if config.mode == "train" else guard.estimated_forward_ms
        )
        / result.slower_ms,
        "memory_estimate_mb": guard.memory_estimate_mb,
        "memory_peak_mb": guard.memory_peak_mb,
    }


def _ratio(a: float | None, b: float | None) -> str:
    return f"{a / b:.2f}" if a is not None and b else "—"


def table(tiny: bool, min_time: float, env: dict[str, str], empty_cache: bool = False) -> None:
    """Every case in a child process under `env`; one Markdown table. `empty_cache`: each case
    gets a fresh inductor cache (a compile as a first run pays it; else a warm cache is hit)."""
    emulated = "AUTOCAST_EXPLORER_CPU_FLAGS" in env
    print(
        f"\n#### {'AVX2 emulation' if emulated else 'native'} · min_time {min_time} s · load "
        f"{os.getloadavg()[0]:.2f} at start{' · TINY (smoke run, not figures)' if tiny else ''}"
        f"{' · inductor cache empty for each case' if empty_cache else ''}\n"
    )
    print(
        "| case | answered after | refused / forecast | run wall | forecast ÷ wall | "
        "forward (step) est. ÷ measured | memory est. | peak rise | est. ÷ peak |"
    )
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as folder:
        unet = Path(folder) / "unet.py"
        unet.write_text(UNET)
        for label, fields in cases(f"{unet}:build", tiny):
            command = [sys.executable, __file__, "--child", json.dumps(fields)]
            command += ["--min-time", json.dumps(min_time)]
            with tempfile.TemporaryDirectory() as cache:
                fresh = {"TORCHINDUCTOR_CACHE_DIR": cache} if empty_cache else {}
                done = subprocess.run(
                    command, env={**os.environ, **env, **fresh}, capture_output=True, text=True
                )
            if done.returncode != 0:
                tail = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
                print(f"| {label} | failed: {tail[:150]} | | | | | | | |", flush=True)
                continue
            m = json.loads(done.stdout.strip().splitlines()[-1])
            if "refused" in m:
                print(f"| {label} | {m['answer_s']:.1f} s | {m['refused'][:90]} | | | | | | |")
                continue
            peak = m["memory_peak_mb"]
            print(
                f"| {label} | {m['answer_s']:.1f} s | {m['forecast_s']:.1f} s (≤ "
                f"{m['at_most_s']:.1f} s) | {m['wall_s']:.1f} s | "
                f"{_ratio(m['forecast_s'], m['wall_s'])} | {m['forward_ratio']:.2f} | "
                f"{m['memory_estimate_mb']:,.0f} MB | "
                f"{'—' if peak is None else f'{peak:,.0f} MB'} | "
                f"{_ratio(m['memory_estimate_mb'], peak)} |",
                flush=True,
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="tiny sizes: a smoke run")
    parser.add_argument("--min-time", type=float, default=None, help="seconds per mode")
    parser.add_argument("--native-only", action="store_true", help="skip the AVX2 emulation")
    parser.add_argument(
        "--empty-cache", action="store_true", help="a fresh inductor cache for each case"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    min_time = args.min_time or (0.05 if args.tiny else 1.0)
    if args.child:
        print(json.dumps(child(json.loads(args.child), min_time)))
        return 0
    for env in ({},) if args.native_only else ({}, AVX2_ENV):
        table(args.tiny, min_time, env, args.empty_cache)
    return 0


if __name__ == "__main__":
    sys.exit(main())

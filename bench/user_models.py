"""Your own model, measured: a ResNet, a MobileNet, a ViT and a BERT-like model (Hugging Face
architectures built offline from their configs, random weights) — speedup, dtypes, agreement —
natively and under the AVX2 emulation `make test-as-avx2` uses (each in a child process).

    .venv/bin/python bench/user_models.py            # quiet machine: the figures for RESULTS.md
    .venv/bin/python bench/user_models.py --tiny     # smoke run: tiny configs, seconds

Prints Markdown: one table per environment. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

#: (label, config fields) at realistic sizes; ViT-Small and a 4-layer BERT keep a run in minutes.
MODELS: tuple[tuple[str, dict], ...] = (
    ("ResNet-50", {"model": "hf:resnet", "batch": 8}),
    ("MobileNetV2", {"model": "hf:mobilenet_v2", "batch": 8}),
    (
        "ViT-Small/16",
        {
            "model": "hf:vit",
            "batch": 8,
            "model_args": {
                "hidden_size": 384,
                "num_hidden_layers": 12,
                "num_attention_heads": 6,
                "intermediate_size": 1536,
            },
        },
    ),
    (
        "BERT (4 layers, 256 wide)",
        {
            "model": "hf:bert",
            "batch": 8,
            "seq": 128,
            "model_args": {
                "num_hidden_layers": 4,
                "hidden_size": 256,
                "num_attention_heads": 4,
                "intermediate_size": 1024,
            },
        },
    ),
)
#: The same architectures shrunk until a smoke run takes seconds.
TINY_ARGS = {
    "hf:resnet": {"depths": [1, 1], "hidden_sizes": [16, 32], "embedding_size": 8},
    "hf:mobilenet_v2": {"depth_multiplier": 0.35},
    "hf:vit": {
        "hidden_size": 32,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 64,
        "image_size": 32,
    },
    "hf:bert": {
        "num_hidden_layers": 1,
        "hidden_size": 32,
        "num_attention_heads": 2,
        "intermediate_size": 64,
    },
}
AVX2_ENV = {
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "ATEN_CPU_CAPABILITY": "avx2",
    "AUTOCAST_EXPLORER_CPU_FLAGS": "avx2,fma",
}


def measure(fields: dict, tiny: bool, min_time: float) -> dict:
    """One run of one model; the figures of one table row."""
    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.experiment.engine import run_experiment

    fields = dict(fields)
    if tiny:
        fields["model_args"] = TINY_ARGS[fields["model"]]
        fields["batch"] = 2
        fields["seq"] = 16
        if fields["model"] != "hf:bert":
            fields["input_image"] = 32
    config = ExperimentConfig(**fields, min_time=min_time, threads=1, allow_slow=True)
    r = run_experiment(config)
    info = r.model_info
    rows = [layer for layer in r.layers if layer.autocast is not None]
    low = sum(layer.autocast.out_dtype == config.dtype for layer in rows)
    a = r.agreement
    if r.autocast_error:
        agreement = f"autocast raised: {r.autocast_error[:80]}"
    elif a.no_argmax_reason:
        agreement = f"no argmax; cosine {a.cosine:.6f}"
    else:
        agreement = f"{a.agree}/{a.rows} argmax; cosine {a.cosine:.6f}"
    return {
        "params": info.parameters,
        "input": "×".join(map(str, (config.batch, *info.input_shape))),
        "plain_ms": r.plain.median_ms,
        "auto_ms": r.autocast.median_ms if r.autocast else None,
        "speedup": r.speedup if r.autocast else None,
        "output": f"{r.output_dtype_plain} → {r.output_dtype_autocast or '—'}",
        "rows": f"{low}/{len(rows)} rows {config.dtype} (depth {info.layer_depth})",
        "agreement": agreement,
        "max_diff": a.max_abs_diff if a else None,
        "noisy": any("noisy" in w for w in r.warnings),
    }


def table(tiny: bool, min_time: float) -> None:
    import torch

    flags = os.environ.get("AUTOCAST_EXPLORER_CPU_FLAGS", "native")
    print(
        f"\n#### {'AVX2 emulation' if flags != 'native' else 'native'} · torch "
        f"{torch.__version__} · capability {torch.backends.cpu.get_cpu_capability()} · 1 thread "
        f"· load {os.getloadavg()[0]:.2f}{' · TINY (smoke run, not figures)' if tiny else ''}\n"
    )
    print("| model | params | input | float32 ms | autocast ms | speedup | output dtype | "
          "layer rows | agreement | max |diff| |")  # fmt: skip
    print("| --- | ---: | --- | ---: | ---: | ---: | --- | --- | --- | ---: |")
    for label, fields in MODELS:
        m = measure(fields, tiny, min_time)
        speed = f"{m['speedup']:.2f}×" if m["speedup"] else "—"
        auto = f"{m['auto_ms']:.1f}" if m["auto_ms"] else "—"
        noisy = " (noisy)" if m["noisy"] else ""
        print(
            f"| {label} | {m['params']:,} | {m['input']} | {m['plain_ms']:.1f} | {auto} | "
            f"{speed}{noisy} | {m['output']} | {m['rows']} | {m['agreement']} | "
            f"{m['max_diff']:.3g} |",
            flush=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="tiny configs: a smoke run")
    parser.add_argument("--min-time", type=float, default=None, help="seconds per mode")
    parser.add_argument("--one-env", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    min_time = args.min_time or (0.02 if args.tiny else 2.0)
    if args.one_env:
        table(args.tiny, min_time)
        return 0
    command = [sys.executable, __file__, "--one-env", "--min-time", json.dumps(min_time)]
    command += ["--tiny"] if args.tiny else []
    failed = 0
    for extra in ({}, AVX2_ENV):
        failed |= subprocess.run(command, env={**os.environ, **extra}).returncode
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

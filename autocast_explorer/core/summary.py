"""Words for a result: the verdict sentence and the readable summary the CLI prints.

Kept in core so the window's status bar, the CLI and reports say the same thing.
"""

from __future__ import annotations

from autocast_explorer.core.hardware import NATIVE_BF16_FLAGS, NATIVE_FP16_FLAGS
from autocast_explorer.core.result import ExperimentResult


def hardware_clause(result: ExperimentResult) -> str:
    """Whether the CPU runs the autocast dtype natively, naming the flags that decide it."""
    env = result.environment
    wanted = NATIVE_BF16_FLAGS if result.config.dtype == "bfloat16" else NATIVE_FP16_FLAGS
    present = sorted(wanted & set(env.cpu_flags))
    if present:
        return f"this CPU has native {result.config.dtype} ({', '.join(present)})"
    return f"this CPU has no native {result.config.dtype} (no {' / '.join(sorted(wanted))})"


def verdict(result: ExperimentResult) -> str:
    """One sentence: faster or slower, by how much, and what the hardware offers."""
    speedup = result.speedup
    if speedup != speedup:  # NaN
        return "autocast could not be timed"
    if speedup >= 1.05:
        pace = f"autocast was {speedup:.2f}× faster here"
    elif speedup <= 1 / 1.05:
        pace = f"autocast was {1 / speedup:.2f}× slower here"
    else:
        pace = f"autocast ran at about the same speed here ({speedup:.2f}×)"
    agree = result.agreement
    return (
        f"{pace}; {hardware_clause(result)}; predictions agreed on {agree.agree}/{agree.rows} rows."
    )


def format_summary(result: ExperimentResult) -> str:
    """The multi-line report `autocast-explorer run` prints."""
    cfg = result.config
    env = result.environment
    lines = [
        f"Autocast Explorer · widths {','.join(map(str, cfg.widths))} · batch {cfg.batch} · "
        f"{cfg.activation} · head {cfg.head} · autocast dtype {cfg.dtype} · seed {cfg.seed}",
        f"{env.cpu_model} · torch {env.torch_version} · capability {env.cpu_capability} · "
        f"{env.threads} threads",
        "",
        "Latency per forward (median, p25–p75, cold first call):",
    ]
    for label, stats, dtype in (
        ("plain", result.plain, "float32"),
        ("autocast", result.autocast, cfg.dtype),
    ):
        lines.append(
            f"  {label:<9}{dtype:<10}{stats.median_ms:9.3f} ms  "
            f"[{stats.p25_ms:.3f}–{stats.p75_ms:.3f}]  IQR {stats.iqr_ms:.3f} ms  "
            f"cold {stats.cold_ms:.3f} ms  {stats.gflops(result.flops):7.1f} GFLOP/s  "
            f"({stats.samples}×{stats.block_size} calls)"
        )
    lines.append(f"  speedup  {result.speedup:.3f}× (plain median / autocast median)")
    lines += ["", "Dtype per layer (in → out):"]
    width = max((len(layer.name) for layer in result.layers), default=4)
    for layer in result.layers:
        lines.append(
            f"  {layer.name:<{width}}  {layer.kind:<11} plain {layer.plain.in_dtype}→"
            f"{layer.plain.out_dtype:<9}  autocast {layer.autocast.in_dtype}→"
            f"{layer.autocast.out_dtype}"
        )
    lines.append(
        f"  output: plain {result.output_dtype_plain}, autocast {result.output_dtype_autocast}"
    )
    a = result.agreement
    lines += [
        "",
        "Agreement:",
        f"  predictions agree on {a.agree}/{a.rows} rows ({a.fraction:.1%}); "
        f"allclose(atol={a.atol:g}, rtol={a.rtol:g}) = {a.allclose}",
        f"  max |diff| {a.max_abs_diff:.3g} · mean |diff| {a.mean_abs_diff:.3g} · "
        f"cosine {a.cosine:.6f}",
        "",
        f"Verdict: {verdict(result)}",
    ]
    lines += [f"Warning: {w}" for w in result.warnings]
    return "\n".join(lines)

"""Words for a result: the verdict sentence and the readable summary the CLI prints.

Kept in core so the window's status bar, the CLI and reports say the same thing.
"""

from __future__ import annotations

from autocast_explorer.core.data.records import DataInfo
from autocast_explorer.core.data.summary import accuracy_lines, epochs_text
from autocast_explorer.core.experiment.capture import LayerRecord
from autocast_explorer.core.experiment.config import TRAINING_STEP_FORWARDS
from autocast_explorer.core.experiment.config_words import kept_clause, model_options
from autocast_explorer.core.experiment.fallback import silent_fallbacks
from autocast_explorer.core.experiment.input_record import input_words
from autocast_explorer.core.experiment.pace import SAME_SPEED, SPEED_CALL_WORDS, ms_text, ratio_text
from autocast_explorer.core.experiment.policy_summary import format_probe
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.experiment.route_summary import route_lines
from autocast_explorer.core.experiment.speed_words import (
    rates_clause,
    speed_clause,
    speed_interval_words,
    speed_title,
    speedup_line,
)
from autocast_explorer.core.experiment.train_report import EpochScore, TrainReport
from autocast_explorer.core.hardware.capabilities import native_support

#: format_probe lives in policy_summary.py; the CLI imports it from here.
__all__ = [
    "SAME_SPEED",
    "format_probe",
    "format_summary",
    "guard_line",
    "hardware_clause",
    "speed_clause",
    "speed_interval_words",
    "speed_title",
    "verdict",
]


def hardware_clause(result: ExperimentResult) -> str:
    """Whether the CPU runs the autocast dtype natively, naming the flags that decide it."""
    support = native_support(result.environment.cpu_flags, result.config.dtype)
    if support.native:
        return f"this CPU has native {support.dtype} ({support.present_text})"
    return f"this CPU has no native {support.dtype} (it lacks {support.lacks})"


def guard_line(result: ExperimentResult) -> str:
    """The time guard's forecast beside the measurement ('' for results that lack one)."""
    guard = result.guard
    if guard is None:
        return ""
    auto = result.autocast
    slower = "float32" if auto is None or result.plain.median_ms >= auto.median_ms else "autocast"
    measured = result.slower_ms
    estimated, per = guard.estimated_forward_ms, "per forward"
    if result.train is not None:  # the timed call is a training step (older files: 3 forwards)
        step_ms = guard.estimated_step_ms
        estimated = step_ms if step_ms is not None else estimated * TRAINING_STEP_FORWARDS
        per = "per training step"
    ratio = estimated / measured if measured > 0 else float("nan")
    line = (
        f"time guard estimated {ms_text(estimated)} {per}; measured {ms_text(measured)} "
        f"({slower}, the slower mode), so the estimate was {ratio_text(ratio)}× that"
    )
    if guard.memory_estimate_mb is not None and guard.memory_peak_mb is not None:
        line += f"; memory guard estimated {guard.memory_estimate_mb:,.0f} MB, " + (
            peak_rise_words(guard.memory_estimate_mb, guard.memory_peak_mb)
        )
    return line


#: Below this rise the process's peak says nothing about the estimate (pages the allocator had
#: already, a run of a few kB): no ratio is stated.
SMALLEST_TOLD_RISE_MB = 1.0


def peak_rise_words(estimate_mb: float, peak_mb: float) -> str:
    """The measured peak rise beside the estimate: "the run's peak rose 37 MB (1.08×)"."""
    if peak_mb < SMALLEST_TOLD_RISE_MB:
        return f"the run's peak rose less than {SMALLEST_TOLD_RISE_MB:.0f} MB"
    return f"the run's peak rose {peak_mb:,.0f} MB ({ratio_text(estimate_mb / peak_mb)}×)"


def autocast_error_finding(result: ExperimentResult) -> tuple[str, str]:
    """(headline, what it means) for a result whose autocast forward raised; ("", "") if not.

    The window's headline, the CLI's finding and reports use these words.
    """
    if not result.autocast_error:
        return "", ""
    dtype = result.config.dtype
    headline = f"{dtype} autocast could not run this model here: the forward raised"
    layers = [layer.name for layer in result.layers if layer.autocast is None]
    where = f" at {layers[0]} ({_kind(result, layers[0])})" if layers else ""
    meaning = (
        f"The autocast forward raised{where}, so only float32 was timed; there is no speedup "
        f"or agreement to show. This is what torch {result.environment.torch_version} does on "
        f"this CPU ({hardware_clause(result)}): a model like this cannot use {dtype} "
        "autocast here as it is. Keep this layer in float32 (run it outside the autocast "
        "region) or use another CPU. The other autocast dtype is no way out by itself: it "
        "can raise the same error, and only a run of it shows whether it does here."
    )
    return headline, meaning


def kept_mark(layer: LayerRecord) -> str:
    """' (kept in float32)' after a layer the run kept in float32 ('' for any other)."""
    return " (kept in float32)" if layer.kept_float32 else ""


def compute_sentence(result: ExperimentResult, layer: LayerRecord) -> str:
    """What the layer's ops ran in under autocast ('' when there is nothing to say): core's
    summary, or why a traced run has none for it."""
    if layer.autocast is None:
        return ""
    compute = layer.autocast.compute
    if compute is not None:
        if compute.ops or compute.casts:
            return compute.summary(layer.autocast.out_dtype)
        return "no maths of its own (shape ops only)"
    traced = any(la.autocast is not None and la.autocast.compute for la in result.layers)
    if traced:  # this run attributed ops, yet not this layer's: its traced output differed
        return "not seen: this layer's kernel runs differently under the op tracer"
    return ""


def _kind(result: ExperimentResult, name: str) -> str:
    return next((layer.kind for layer in result.layers if layer.name == name), "?")


def fast_path_sentence(result: ExperimentResult) -> str:
    """For a transformer: which encoder path ran, and what that did to the dtypes; else ""."""
    fast = result.fast_path
    if fast is None:
        return ""
    ran = fast.get("autocast", fast.get("plain", False))
    encoders = [layer for layer in result.layers if layer.kind == "TransformerEncoderLayer"]
    out = encoders[0].autocast.out_dtype if encoders and encoders[0].autocast else "?"
    if ran:
        return (
            "the fused encoder kernel (fast path: eval + no_grad) ran; under autocast each "
            f"encoder layer returned {out}"
        )
    why = "turned off" if not result.config.fast_path else "not taken"
    return (
        f"the fast path was {why}: the ordinary modules ran one by one; under autocast each "
        f"encoder layer returned {out} (the residual add of a float32 input promotes)"
    )


def measurement_lines(result: ExperimentResult) -> list[str]:
    """The interval, stalls, the machine's load and why timing stopped ([] for old results)."""
    evidence = result.evidence
    if evidence is None:
        return []
    lines = []
    call = result.speed_call
    interval = evidence.interval
    firm = call.graded and not call.rough
    if interval is not None and firm:
        lines.append(
            f"  interval {interval.low:.3f}–{interval.high:.3f}× ({interval.level:.0%}, from "
            f"{interval.pairs} paired blocks' float32 ÷ autocast ratios)"
            if interval.shown
            else f"  interval: none ({interval.too_few_text()})"
        )
    stopped = {
        "precise": f"timing stopped when the interval was within ±{evidence.target or 0:.0%}",
        "max_time": f"the interval did not reach ±{evidence.target or 0:.0%} within the "
        f"{result.config.time_limit:g} s per mode allowed",
        "budget": "timing stopped at the budget",
    }[evidence.stopped]
    if not firm and call.kind != "untimed":
        # A narrow interval on a busy machine is no verdict: say so where it is reported.
        stopped += f" ({SPEED_CALL_WORDS[call.kind]} all the same: see the verdict)"
    stalls = len(evidence.stalls)
    lines.append(
        f"  {stopped}; {stalls} stalled block{'s' if stalls != 1 else ''} left out and "
        "re-measured"
        + (
            f" ({', '.join(f'{s.mode} {s.ms:.3g} ms' for s in evidence.stalls[:3])}"
            + (", …)" if stalls > 3 else ")")
            if stalls
            else ""
        )
    )
    load = evidence.load
    if load is not None:
        busy = load.busy_text() or "other programs' CPU time: not readable here"
        freq = load.freq_text()
        lines.append(
            f"  during timing ({load.wall_s:.2f} s): {busy}" + (f"; {freq}" if freq else "")
        )
    return lines


def verdict(result: ExperimentResult) -> str:
    """One sentence: faster or slower, by how much, and what the hardware offers."""
    if result.autocast_error:
        return (
            f"{result.config.dtype} autocast raised an error on this model, so only float32 "
            f"was measured; {hardware_clause(result)}."
        )
    said = speed_clause(result)
    agree = result.agreement
    agreed = f"; predictions agreed on {agree.agree}/{agree.rows} rows" if agree else ""
    if agree and agree.no_argmax_reason:
        agreed = f"; outputs' cosine similarity {agree.cosine:.6f} (no predicted class)"
    return f"{said}; {hardware_clause(result)}{agreed}."


def format_summary(result: ExperimentResult) -> str:
    """The multi-line report `autocast-explorer run` prints."""
    lines = [
        *_heading_lines(result),
        *_latency_lines(result),
        *_finding_lines(result),
        *training_lines(result),
        *_data_lines(result),
        *_layer_lines(result),
        *_agreement_lines(result),
        *numerics_lines(result),
        *_verdict_lines(result),
    ]
    return "\n".join(lines)


def _heading_lines(result: ExperimentResult) -> list[str]:
    """The model and config, the machine, what the model was fed, then what the latency rows
    time."""
    cfg = result.config
    env = result.environment
    model = f"widths {','.join(map(str, cfg.widths))}" if cfg.model == "mlp" else cfg.title
    return [
        f"Autocast Explorer · {model} · batch {cfg.batch}{model_options(cfg)} · "
        f"autocast dtype {cfg.dtype} · seed {cfg.seed}{kept_clause(cfg)}",
        f"{env.cpu_model} · torch {env.torch_version} · capability {env.cpu_capability} · "
        f"{env.threads_text}",
        *([f"Input fed: {input_words(result.input)}"] if result.input else []),
        "",
        "Latency per forward (median, p25–p75, cold first call):"
        if result.train is None
        else "Time per training step: forward + loss + backward + optimizer step "
        "(median, p25–p75, cold first step):",
    ]


def _latency_lines(result: ExperimentResult) -> list[str]:
    """Each mode's latency, the speedup with its measurement, and the time guard's forecast."""
    lines = []
    for label, stats, dtype in (
        ("plain", result.plain, "float32"),
        ("autocast", result.autocast, result.config.dtype),
    ):
        if stats is None:
            lines.append(f"  {label:<9}{dtype:<10} not measured: the forward raised (below)")
            continue
        lines.append(
            f"  {label:<9}{dtype:<10}{stats.median_ms:9.3f} ms  "
            f"[{stats.p25_ms:.3f}–{stats.p75_ms:.3f}]  IQR {stats.iqr_ms:.3f} ms  "
            f"cold {stats.cold_ms:.3f} ms  {stats.gflops(result.flops):7.1f} GFLOP/s  "
            f"({stats.samples}×{stats.block_size} calls)"
        )
    if result.autocast is not None:
        lines.append(f"  speedup  {speedup_line(result)}")
        lines += measurement_lines(result)
    if result.guard is not None:
        lines.append(f"  {guard_line(result)}")
        lines.append(f"    (basis: {result.guard.basis})")
    return lines


def _finding_lines(result: ExperimentResult) -> list[str]:
    """An autocast forward that raised, fallbacks that ran silently, and the other routes."""
    lines = []
    headline, meaning = autocast_error_finding(result)
    if headline:
        lines += ["", f"Finding: {headline}.", f"  {result.autocast_error}", f"  {meaning}"]
    for fallback in silent_fallbacks(result):
        lines += ["", f"Finding: {fallback.headline}.", f"  {fallback.meaning}"]
    if result.routes:
        calls = [result.route_call(route) for route in result.routes]
        lines += ["", *route_lines(result.routes, calls)]
    return lines


def _data_lines(result: ExperimentResult) -> list[str]:
    """Real data: each epoch's scores when trained on it, else the held-out answers."""
    epochs = result.train.epochs if result.train is not None else ()
    if result.data is not None and epochs:
        return epoch_lines(result.data, epochs, result.config.dtype)
    return accuracy_lines(result.data, result.accuracy)


def _layer_lines(result: ExperimentResult) -> list[str]:
    """Each layer's dtypes in and out per mode (and what it computed in), then the output's."""
    lines = [
        "",
        "Dtype per layer (in → out):"
        if result.train is None
        else "Dtype per layer in the training forward (in → out):",
    ]
    width = max((len(layer.name) for layer in result.layers), default=4)
    kind_width = max([11, *(len(layer.kind) for layer in result.layers)])
    for layer in result.layers:
        auto = (
            f"{layer.autocast.in_dtype}→{layer.autocast.out_dtype}"
            if layer.autocast is not None
            else "did not run (the forward raised)"
        )
        lines.append(
            f"  {layer.name:<{width}}  {layer.kind:<{kind_width}} plain {layer.plain.in_dtype}→"
            f"{layer.plain.out_dtype:<9}  autocast {auto}{kept_mark(layer)}"
        )
        seen = compute_sentence(result, layer)
        if seen:
            lines.append(f"  {' ' * (width + kind_width + 3)}computed in: {seen}")
    lines.append(
        f"  output: plain {result.output_dtype_plain}, "
        f"autocast {result.output_dtype_autocast or 'none (the forward raised)'}"
    )
    path = fast_path_sentence(result)
    if path:
        lines.append(f"  transformer path: {path}")
    return lines


def _agreement_lines(result: ExperimentResult) -> list[str]:
    """How far the two modes' outputs agree; empty when the autocast forward raised."""
    a = result.agreement
    if a is None:
        return []
    return [
        "",
        ("Agreement (the timed batch of held-out rows):" if result.data else "Agreement:")
        if result.train is None
        else "Agreement of the trained models (held-out set):",
        (
            f"  no argmax: {a.no_argmax_reason}; "
            if a.no_argmax_reason
            else f"  predictions agree on {a.agree}/{a.rows} rows ({a.fraction:.1%}); "
        )
        + f"allclose(atol={a.atol:g}, rtol={a.rtol:g}) = {a.allclose}",
        f"  max |diff| {a.max_abs_diff:.3g} · mean |diff| {a.mean_abs_diff:.3g} · "
        f"cosine {a.cosine:.6f}",
    ]


def _verdict_lines(result: ExperimentResult) -> list[str]:
    """The verdict, what ran instead of a dtype this CPU lacks, and the run's warnings."""
    lines = ["", f"Verdict: {verdict(result)}"]
    support = native_support(result.environment.cpu_flags, result.config.dtype)
    if not support.native and result.autocast is not None:
        lines.append(f"What ran instead: {support.instead}; {rates_clause(result)}.")
    lines += [f"Warning: {w}" for w in result.warnings]
    return lines


def _mb(count: int) -> str:
    return f"{count / 1e6:.2f} MB"


def training_lines(result: ExperimentResult) -> list[str]:
    """Loss, accuracy, dtypes, saved bytes and the scaler of a training run; empty otherwise."""
    train = result.train
    if train is None:
        return []
    cfg = result.config
    lines = ["", "Phases of a step (median ms, steps after the first):"]
    for mode, dtype in (("plain", "float32"), ("autocast", cfg.dtype)):
        p = train.phases.get(mode)
        if p is not None:
            lines.append(
                f"  {mode:<9}{dtype:<10} forward {p.forward_ms:8.3f}  backward "
                f"{p.backward_ms:8.3f}  optimizer {p.optimizer_ms:8.3f}"
            )
    loss_p, loss_a = train.loss["plain"], train.loss["autocast"]
    grads = sorted(set(train.grad_dtypes.values()))
    lines += [
        "",
        f"Training ({train.steps} steps, {cfg.optimizer}, lr {cfg.lr:g}, {train.loss_name} "
        "loss, same initialisation and batches):",
        f"  loss     float32 {loss_p[0]:.4f} → {loss_p[-1]:.4f}   "
        f"autocast {loss_a[0]:.4f} → {loss_a[-1]:.4f}",
        *held_out_lines(train),
        f"  loss dtype: float32 run {train.loss_dtype['plain']}, autocast run "
        f"{train.loss_dtype['autocast']} (model output {train.output_dtype['autocast']})",
        f"  gradient dtypes under autocast: {', '.join(grads) or 'none'} "
        f"({len(train.grad_dtypes)} parameters)",
        f"  saved for backward: float32 {_mb(train.saved_bytes['plain'])} "
        f"({train.saved_tensors['plain']} tensors), autocast "
        f"{_mb(train.saved_bytes['autocast'])} ({train.saved_tensors['autocast']} tensors), "
        f"ratio {train.saved_ratio:.2f}",
    ]
    if train.divergence():
        lines.append(f"  {train.divergence()}")
    sc = train.scaler
    if sc.used:
        lines.append(
            f"  GradScaler: enabled {sc.enabled}, scale {sc.init_scale:g} → {sc.final_scale:g}, "
            f"{sc.skipped_steps} skipped steps"
        )
    elif cfg.dtype == "float16":
        lines.append("  GradScaler: not used (--no-scaler)")
    else:
        lines.append(f"  GradScaler: not needed ({cfg.dtype} has float32's exponent range)")
    lines.append(
        f"  gradient elements zero under autocast but not in float32 (first step): "
        f"{sc.underflowed_grads:,} of {sc.grad_elements:,}"
    )
    return lines


#: Parameters named one by one in the summary's cast line; the JSON has them all.
NAMED_PARAMETERS = 12


def parameter_cast_text(by_source: dict[str, int], limit: int = NAMED_PARAMETERS) -> str:
    """'fc1.weight 1×, fc1.bias 1×, … and 30 more (casts.by_source has them all)'."""
    items = [f"{name} {n}×" for name, n in by_source.items()]
    more = len(items) - limit
    text = ", ".join(items[:limit])
    return text + (f", … and {more} more (casts.by_source has them all)" if more > 0 else "")


def held_out_lines(train: TrainReport) -> list[str]:
    """Held-out accuracy (cross-entropy) or held-out MSE and why there is no accuracy."""
    rows = f"({train.held_out_rows} rows)"
    if train.has_accuracy:
        return [
            f"  held-out accuracy {rows}: float32 {train.accuracy['plain']:.1%}   "
            f"autocast {train.accuracy['autocast']:.1%}"
        ]
    lines = []
    if train.held_out_loss:
        lines.append(
            f"  held-out MSE {rows}: float32 {train.held_out_loss['plain']:.4g}   "
            f"autocast {train.held_out_loss['autocast']:.4g}"
        )
    return [*lines, f"  no accuracy: {train.no_accuracy_reason()}"]


def _sqnr_text(db: float) -> str:
    if db == float("inf"):
        return "SQNR    ∞ dB (identical)"
    return f"SQNR {db:6.1f} dB"


def numerics_lines(result: ExperimentResult) -> list[str]:
    """Top-k, flipped rows, per-layer error and casts; empty for older results."""
    a = result.agreement
    lines: list[str] = []
    if a is not None and a.topk is not None:
        t = a.topk
        lines.append(
            f"  top-{t.k}: float32 top-1 within autocast's top {t.k} on {t.contains}/{a.rows} "
            f"rows; top-{t.k} sets overlap {t.overlap:.1%}"
        )
        flipped = a.rows - a.agree
        if flipped == 0:
            lines.append("  flipped rows: none")
        else:
            shown = ", ".join(
                f"row {f.row}: {f.plain_class}→{f.autocast_class} (margin {f.margin:.3g})"
                for f in a.flips[:5]
            )
            more = f", … {flipped - 5} more" if flipped > 5 else ""
            lines.append(f"  flipped rows ({flipped}): {shown}{more}")
    measured = [layer for layer in result.layers if layer.error is not None]
    if measured:
        width = max(len(layer.name) for layer in measured)
        lines += ["", "Error per layer (autocast output vs float32 output):"]
        for layer in measured:
            e = layer.error
            assert e is not None
            lines.append(
                f"  {layer.name:<{width}}  max|err| {e.max_abs:9.3g}  mean rel {e.mean_rel:9.3g}  "
                f"{_sqnr_text(e.sqnr_db)}  cosine {e.cosine:.6f}"
                + (f"  ({e.nonfinite} values overflowed)" if e.nonfinite else "")
            )
    trace = result.op_trace
    if trace is not None:
        c = trace.casts
        ops = ", ".join(f"{n}× {op}" for op, n in c.by_op.items()) or "none"
        lines += [
            "",
            f"Casts autocast inserted (one forward under {trace.grad_mode}): {c.count} "
            f"({ops}), {c.bytes:,} bytes written, {c.bytes_read:,} read",
        ]
        if c.by_source:
            kinds = c.by_kind or c.by_source  # older results: by_source held the classes
            sources = ", ".join(f"{n}× {name}" for name, n in kinds.items())
            lines.append(
                f"  of which model parameters: {sources}; "
                f"{c.count - c.parameter_casts} of activations"
            )
            if c.by_kind:
                lines.append(f"    by parameter: {parameter_cast_text(c.by_source)}")
        for mode, other in trace.casts_by_grad_mode.items():
            if mode != trace.grad_mode:
                seen = ", ".join(f"{n}× {op}" for op, n in other.by_op.items()) or "none"
                lines.append(f"  under {mode} the same forward's casts are seen as: {seen}")
    return lines


#: Epochs listed in full up to this many (then the first and last three).
LISTED_EPOCHS = 12


def epoch_lines(info: DataInfo, epochs: tuple[EpochScore, ...], dtype: str) -> list[str]:
    """Training mode on real data: both copies' loss and held-out accuracy after each epoch."""
    lines = [
        "",
        f"{info.name}: both copies trained {epochs_text(info.epochs)} on {info.n_train:,} rows, "
        f"scored on {info.n_test:,} held-out rows after each:",
        f"  epoch  loss float32  loss {dtype:<9} held-out float32  held-out {dtype}",
    ]
    shown = epochs if len(epochs) <= LISTED_EPOCHS else (*epochs[:3], None, *epochs[-3:])
    for e in shown:
        if e is None:
            lines.append("  …")
            continue
        lines.append(
            f"  {e.epoch:>5}  {e.loss['plain']:12.4f}  {e.loss['autocast']:13.4f}  "
            f"{e.accuracy['plain']:16.1%}  {e.accuracy['autocast']:>{9 + len(dtype)}.1%}"
        )
    return lines

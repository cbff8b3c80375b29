"""Each lesson's check: the live result (and probe) turned into sentences about this machine.

A check says what *this* torch on *this* CPU did, built from the result's numbers and dtypes;
where that contradicts the tutorial it says so instead of repeating the tutorial.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from autocast_explorer.core.experiment.config import parameter_count
from autocast_explorer.core.experiment.pace import ms_text, ratio_text
from autocast_explorer.core.learning.lesson_types import PROBE_OPS, LessonOutcome, Probe

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.agreement import Agreement
    from autocast_explorer.core.experiment.capture import LayerDtypes, LayerRecord
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.experiment.timing import LatencyStats


# ---- helpers over a result ------------------------------------------------------------------
def linear_layers(result: ExperimentResult) -> list[LayerRecord]:
    return [layer for layer in result.layers if layer.kind == "Linear"]


def autocast_dtypes(layer: LayerRecord) -> LayerDtypes:
    """The layer's dtypes under autocast. The checks grade only results whose autocast forward
    finished (Lesson.check), where every layer has them."""
    if layer.autocast is None:
        raise ValueError(f"the autocast forward did not reach {layer.name}")
    return layer.autocast


def _compared(result: ExperimentResult) -> tuple[Agreement, LatencyStats]:
    """The agreement and the autocast latency: present once the autocast forward finished."""
    if result.agreement is None or result.autocast is None:
        raise ValueError("the autocast forward did not finish")
    return result.agreement, result.autocast


def _names(layers: Sequence[LayerRecord]) -> str:
    names = [layer.name for layer in layers]
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def dtype_groups(
    layers: Sequence[LayerRecord], pick: Callable[[LayerRecord], str]
) -> list[tuple[str, list[LayerRecord]]]:
    """Layers grouped by a picked dtype, most common first: [(dtype, [layers…]), …]."""
    counts = Counter(pick(layer) for layer in layers)
    return [
        (dtype, [la for la in layers if pick(la) == dtype]) for dtype, _ in counts.most_common()
    ]


def describe_groups(
    layers: Sequence[LayerRecord], pick: Callable[[LayerRecord], str], verb: str
) -> str:
    parts = [f"{_names(group)} {verb} {dtype}" for dtype, group in dtype_groups(layers, pick)]
    return "; ".join(parts)


# ---- one check per lesson (Lesson.checker) -------------------------------------------------------
def check_plain(result: ExperimentResult, probe: Probe | None) -> LessonOutcome:
    layers = result.layers
    all_f32 = all(la.plain.in_dtype == la.plain.out_dtype == "float32" for la in layers)
    output = result.output_dtype_plain
    if all_f32:
        headline = (
            f"Without autocast, all {len(layers)} layers took float32 in and gave float32 out."
        )
    else:
        headline = (
            "Without autocast, the layers did not all stay in float32: "
            + describe_groups(layers, lambda la: la.plain.out_dtype, "returned")
            + "."
        )
    agreement, _ = _compared(result)
    sentences = [
        f"The model's output (the logits for {agreement.rows} rows) was {output}."
        if not agreement.no_argmax_reason
        else f"The model's output ({result.config.batch} rows) was {output}.",
        f"A plain forward took {ms_text(result.plain.median_ms)} (median of "
        f"{result.plain.samples} timed blocks) for {result.flops / 1e6:,.1f} MFLOP.",
    ]
    return LessonOutcome(
        "plain", headline, tuple(sentences), all_f32 and output == "float32", "dtype"
    )


def check_linear(result: ExperimentResult, probe: Probe | None) -> LessonOutcome:
    low = result.config.dtype
    linears = linear_layers(result)
    if not linears:
        return LessonOutcome(
            "linear", "This result records no Linear layers to look at.", (), False, "dtype"
        )
    outs = {autocast_dtypes(la).out_dtype for la in linears}
    headline = (
        f"Under autocast ({low}), "
        + describe_groups(linears, lambda la: autocast_dtypes(la).out_dtype, "returned")
        + "; without autocast they returned "
        + "/".join(sorted({la.plain.out_dtype for la in linears}))
        + "."
    )
    sentences = []
    first, first_dtypes = linears[0], autocast_dtypes(linears[0])
    if first_dtypes.in_dtype != first_dtypes.out_dtype:
        sentences.append(
            f"{first.name} was fed {first_dtypes.in_dtype} and still returned "
            f"{first_dtypes.out_dtype}: the cast happens inside the layer call, the input "
            "tensor you pass in is not changed."
        )
    matches = outs == {low}
    if probe is None:
        sentences.append("The stored weights were not inspected in this run.")
    else:
        weights = "/".join(probe.weight_dtypes)
        sentences.append(
            f"After the autocast forward, the layers' stored weights were still {weights}: "
            f"autocast made temporary {low} copies for the maths and left the parameters alone."
        )
        matches = matches and probe.weight_dtypes == ("float32",)
    sentences.append(
        f"The model's output was {result.output_dtype_autocast} under autocast and "
        f"{result.output_dtype_plain} without."
    )
    return LessonOutcome("linear", headline, tuple(sentences), matches, "dtype")


def check_float32_ops(result: ExperimentResult, probe: Probe | None) -> LessonOutcome:
    low = result.config.dtype
    heads = [la for la in result.layers if la.kind in ("Softmax", "LogSoftmax")]
    activations = [la for la in result.layers if la.kind not in ("Linear", "Softmax", "LogSoftmax")]
    sentences: list[str] = []
    matches = True
    if heads:
        head = heads[0]
        a = autocast_dtypes(head)
        if a.out_dtype == "float32":
            headline = (
                f"Under autocast the {head.name} head was fed {a.in_dtype} and returned float32: "
                "here it was kept in float32, as the tutorial says."
            )
        elif a.out_dtype == a.in_dtype:
            headline = (
                f"Under autocast the {head.name} head was fed {a.in_dtype} and returned "
                f"{a.out_dtype}: on this CPU it follows its input instead of staying in float32."
            )
            matches = False
        else:
            headline = (
                f"Under autocast the {head.name} head was fed {a.in_dtype} and returned "
                f"{a.out_dtype}."
            )
            matches = False
    else:
        headline = (
            "This run had no softmax head, so the model cannot show what softmax does; "
            "set head to softmax (the lesson's config) and run again."
        )
        matches = False
    if activations:
        sentences.append(
            "Under autocast "
            + describe_groups(
                activations,
                lambda la: f"{autocast_dtypes(la).in_dtype} → {autocast_dtypes(la).out_dtype}",
                "ran",
            )
            + "."
        )
    if probe is not None:
        direct = []
        for input_dtype in ("float32", probe.autocast_dtype):
            seen = [probe.op(op, input_dtype) for op in PROBE_OPS]
            outs = ", ".join(f"{o.op} → {o.output_dtype}" for o in seen if o is not None)
            direct.append(f"on a {input_dtype} tensor: {outs}")
        sentences.append("Called directly under autocast, " + "; ".join(direct) + ".")
        f32_kept = all(
            (o := probe.op(op, "float32")) is not None and o.output_dtype == "float32"
            for op in PROBE_OPS
        )
        low_follows = all(
            (o := probe.op(op, probe.autocast_dtype)) is not None and o.follows_input
            for op in PROBE_OPS
        )
        if f32_kept and low_follows:
            sentences.append(
                "So float32 in gives float32 out, which is what the tutorial saw, but "
                f"{probe.autocast_dtype} in gives {probe.autocast_dtype} out: these ops follow "
                "their input on CPU; they are not forced to float32."
            )
            matches = False
    if heads and autocast_dtypes(heads[0]).out_dtype == low:
        sentences.append(
            f"In a model, softmax sits after a Linear layer whose output is already {low}, "
            f"so it runs in {low}."
        )
    return LessonOutcome("float32-ops", headline, tuple(sentences), matches, "dtype")


def check_agreement(result: ExperimentResult, probe: Probe | None) -> LessonOutcome:
    a, _ = _compared(result)
    if a.no_argmax_reason:
        headline = f"No predicted class to compare: {a.no_argmax_reason}."
    elif a.agree == a.rows:
        headline = f"The predicted class was the same on all {a.rows} rows."
    else:
        headline = (
            f"The predicted class was the same on {a.agree} of {a.rows} rows "
            f"({a.fraction:.1%}); {a.rows - a.agree} flipped."
        )
    close = "were" if a.allclose else "were not"
    sentences = (
        f"The logits differed by at most {a.max_abs_diff:.3g} (mean {a.mean_abs_diff:.3g}); "
        f"they {close} close within atol {a.atol:g} and rtol {a.rtol:g}.",
        f"The cosine similarity of the two sets of logits was {a.cosine:.6f}: the low-precision "
        "scores point the same way and differ in the last digits.",
    )
    matches = a.agree == a.rows and a.allclose
    return LessonOutcome("agreement", headline, sentences, matches, "agreement")


def check_timing(result: ExperimentResult, probe: Probe | None) -> LessonOutcome:
    from autocast_explorer.core.experiment.summary import hardware_clause
    from autocast_explorer.core.hardware.capabilities import native_support

    low = result.config.dtype
    p, (_, q) = result.plain, _compared(result)
    params = parameter_count(result.config.widths)
    call = result.speed_call
    native = native_support(result.environment.cpu_flags, low).native
    headline, verdict = _timing_finding(result, native)
    sentences = [
        f"Median per forward: {ms_text(p.median_ms)} in float32, {ms_text(q.median_ms)} under "
        f"autocast ({p.samples} and {q.samples} timed blocks, taken alternately); first calls took "
        f"{ms_text(p.cold_ms)} and {ms_text(q.cold_ms)}.",
        f"Each autocast forward converts all {params:,} parameters (weights and biases) to "
        f"{low} before multiplying, for {result.flops / 1e6:,.1f} MFLOP of maths.",
    ]
    if call.graded and q.median_ms > 0:
        # The headline's figure is the paired one; the medians just shown give their own ratio.
        sentences.append(
            f"The figure above is the typical paired ratio (each float32 block ÷ the autocast "
            f"block timed right after it); the two medians shown give "
            f"{ratio_text(p.median_ms / q.median_ms)}×."
        )
    if verdict:
        sentences.append(verdict)
    sentences.append(f"For the record, {hardware_clause(result)}.")
    if not native:
        rates = (
            "; this run was too noisy to tell, so it states no GFLOP/s"
            if call.too_noisy
            else f", at {result.gflops('autocast'):,.1f} GFLOP/s against "
            f"{result.gflops('plain'):,.1f} GFLOP/s in float32"
        )
        sentences.append(
            f"So nothing here multiplies {low} natively: each {low} matrix product converted "
            "its operands and ran in kernels that compute in float32 inside (torch's own, "
            f"oneDNN's emulation or the BLAS library's){rates}."
        )
    sentences += [f"Note: {w}." for w in result.warnings]
    matches = call.kind == "slower"
    return LessonOutcome(
        "timing", headline, tuple(sentences), matches, "latency", graded=call.graded
    )


def _timing_finding(result: ExperimentResult, native: bool) -> tuple[str, str]:
    """(headline, what it means) of the timing lesson, from the run's speed call: the same
    words as the window's headline; no figure when it cannot tell."""
    from autocast_explorer.core.experiment.summary import speed_clause

    call = result.speed_call
    low = result.config.dtype
    said = speed_clause(result)
    if call.kind == "untimed":
        return "Autocast could not be timed in this run.", ""
    if call.kind in ("unclear", "noisy"):
        return (
            f"{said[:1].upper()}{said[1:]}: this run is not graded.",
            "The medians above are measurements, not a finding; run it again on a quieter "
            "machine (or with fewer threads) to see which way it goes.",
        )
    headline = f"{said[:1].upper()}{said[1:]}."
    if call.kind == "faster":
        return headline, (
            f"On this CPU the time saved by the {low} maths more than paid for the "
            "conversions, even for this small model."
        )
    if call.kind == "slower":
        return headline, (
            f"Here the time saved by the {low} maths did not make up for converting the "
            "weights and activations on every call."
            if native
            else f"Without native {low} arithmetic the {low} maths saved nothing: autocast "
            "paid for converting the weights and activations on every call and then for "
            "maths that ran emulated."
        )
    return headline, (
        f"At this size the time saved by the {low} maths and the cost of the conversions "
        "roughly cancelled out."
        if native
        else f"Without native {low} arithmetic nothing was saved by the maths; the "
        "conversions and the emulated maths together took about as long as float32."
    )


def _mb(count: int) -> str:
    return f"{count / 1e6:.2f} MB"


def check_training(result: ExperimentResult, probe: Probe | None) -> LessonOutcome:
    train = result.train
    low = result.config.dtype
    if train is None:
        return LessonOutcome(
            "training",
            "This run measured inference, not training: switch the mode to Training and run "
            "the step again.",
            (),
            False,
            "loss",
        )
    grads = Counter(train.grad_dtypes.values())
    grad_text = ", ".join(f"{n} {dtype}" for dtype, n in grads.most_common()) or "none"
    loss_f32 = train.loss_dtype.get("autocast") == "float32"
    grads_f32 = set(grads) == {"float32"}
    saved_p, saved_a = train.saved_bytes.get("plain", 0), train.saved_bytes.get("autocast", 0)
    shrinks = 0 < saved_a < saved_p
    if loss_f32 and grads_f32 and shrinks:
        headline = (
            f"Under autocast the loss came back float32, all {len(train.grad_dtypes)} gradients "
            f"were float32, and autograd kept {_mb(saved_a)} for backward instead of "
            f"{_mb(saved_p)}."
        )
    else:
        headline = (
            f"Under autocast the loss came back {train.loss_dtype.get('autocast', '?')}, the "
            f"gradients were {grad_text}, and autograd kept {_mb(saved_a)} for backward "
            f"against {_mb(saved_p)} in float32."
        )
    loss_p, loss_a = train.loss["plain"], train.loss["autocast"]
    sentences = [
        f"The model's output was {train.output_dtype.get('autocast', '?')}: the layers ran in "
        f"{low}, but {train.loss_name} is on autocast's float32 list, so the number you call "
        f"backward() on is {train.loss_dtype.get('autocast', '?')}.",
        f"The parameters are float32, so their gradients are too ({grad_text}); the backward's "
        f"matrix products still ran in {low} on the saved {low} tensors.",
        f"Both copies started from the same weights (first loss {loss_p[0]:.4f} and "
        f"{loss_a[0]:.4f}) and after {train.steps} steps reached {loss_p[-1]:.4f} in float32 "
        f"and {loss_a[-1]:.4f} under autocast; "
        + (
            f"held-out accuracy {train.accuracy['plain']:.1%} and {train.accuracy['autocast']:.1%}."
            if train.has_accuracy
            else f"held-out MSE {train.held_out_loss_text()} (no accuracy: "
            f"{train.no_accuracy_reason()})."
        ),
    ]
    if saved_p:
        sentences.append(
            f"The {train.saved_tensors.get('autocast', 0)} tensors saved for backward took "
            f"{saved_a / saved_p:.0%} of the float32 bytes: that is the memory autocast saves "
            "in training, and it grows with the batch."
        )
    if low == "float16":
        sc = train.scaler
        sentences.append(
            f"float16 used a GradScaler (scale {sc.final_scale:g} at the end, "
            f"{sc.skipped_steps} steps skipped)."
            if sc.used
            else f"Without a GradScaler {sc.underflowed_grads:,} gradient elements underflowed "
            "to zero on the first step."
        )
    return LessonOutcome(
        "training", headline, tuple(sentences), loss_f32 and grads_f32 and shrinks, "loss"
    )


def check_answers(result: ExperimentResult, probe: Probe | None) -> LessonOutcome:
    """Graded from the run's held-out answers: both accuracies, the interval, the flips."""
    from autocast_explorer.core.data.summary import answers_verdict, interval_text

    acc, info = result.accuracy, result.data
    if acc is None or info is None:
        reason = (
            "the autocast forward raised"
            if result.autocast_error
            else "this run used no real data (choose Data: Handwritten digits)"
        )
        return LessonOutcome(
            "answers", f"No held-out answers to compare: {reason}.", (), False, "accuracy"
        )
    sentences = [
        f"Trained in float32 on {info.n_train:,} rows of {info.name}, the model answered "
        f"{acc.plain:.1%} of {acc.rows:,} held-out rows correctly in float32 and "
        f"{acc.autocast:.1%} under {acc.dtype} autocast: {interval_text(acc)}.",
    ]
    if acc.flipped:
        widest = max(f.plain_margin for f in acc.flipped)
        right = sum(f.autocast == f.label for f in acc.flipped)
        sentences.append(
            f"The rows that flipped were near-ties: float32's top two scores were at most "
            f"{widest:.3g} apart there, and autocast's rounding tipped the balance. "
            f"{right} of the {len(acc.flipped)} flips became right, "
            f"{sum(f.plain == f.label for f in acc.flipped)} became wrong."
        )
    elif result.agreement is not None:
        sentences.append(
            f"No row flipped: the scores moved by at most {result.agreement.max_abs_diff:.3g} "
            "on the timed batch, less than the gap between the top two classes of any row."
        )
    low, high = acc.interval
    matches = low <= 0 <= high
    return LessonOutcome("answers", answers_verdict(acc), tuple(sentences), matches, "accuracy")


def check_transformer_paths(result: ExperimentResult, probe: Probe | None) -> LessonOutcome:
    """Graded against the live measurement: the run's encoder dtype and the other path's."""
    dtype = result.config.dtype
    encoders = [la for la in result.layers if la.kind == "TransformerEncoderLayer"]
    if result.autocast_error or not encoders or encoders[0].autocast is None:
        reason = result.autocast_error or "this result holds no encoder layer"
        return LessonOutcome(
            "transformer-paths",
            "The encoder layers could not be compared under autocast.",
            (reason,),
            False,
            "dtype",
        )
    ran_fused = bool(result.fast_path and result.fast_path.get("autocast"))
    this = autocast_dtypes(encoders[0]).out_dtype
    path_name = "the fused fast path" if ran_fused else "the ordinary (train-mode) path"
    sentences = [
        f"This run took {path_name}: under {dtype} autocast "
        f"{describe_groups(encoders, lambda la: autocast_dtypes(la).out_dtype, 'returned')}."
    ]
    other = probe.path(not result.config.fast_path) if probe is not None else None
    same = True
    if other is not None and other.error:
        sentences.append(f"The other path raised: {other.error}.")
    elif other is not None:
        other_name = "the fused fast path" if other.fused else "the ordinary path"
        same = other.encoder_dtype == this
        sentences.append(
            f"Measured just now with the fast path {'allowed' if other.fast_path else 'off'}, "
            f"torch took {other_name} and the same layer returned {other.encoder_dtype}."
        )
        if not same:
            sentences.append(
                "Same layer, same input, two dtypes: the fused kernel runs the whole layer in "
                f"{dtype} including its residual adds, while the ordinary path adds the "
                f"float32 input to a {dtype} sublayer output, and that add promotes to float32."
            )
        else:
            sentences.append(
                "Both paths returned the same dtype on this torch, so here the choice of path "
                "does not change the dtypes downstream."
            )
    headline = (
        f"The encoder layer's dtype depends on the path: {this} on this one."
        if not same
        else f"Both paths gave {this} here."
    )
    return LessonOutcome("transformer-paths", headline, tuple(sentences), same, "dtype")


#: How the plan lesson's headline goes on from the run's speed call (another call: one timing).
PLAN_HEADLINES = {
    "slower": "that rules out eager autocast, not every way of lowering precision",
    "faster": "eager autocast pays; a plan asks whether another way pays more",
    "same": "eager autocast changes little; a plan asks whether another way does",
}


def check_plan(result: ExperimentResult, probe: Probe | None) -> LessonOutcome:
    """From one timing to a plan: what this run measured, and what the Plan tab searches next.

    Not graded: one run of eager autocast cannot tell whether another way of running the model
    in lower precision pays on this CPU; the plan's search is what measures that."""
    from autocast_explorer.core.experiment.route_kinds import route_names
    from autocast_explorer.core.experiment.summary import hardware_clause, speed_clause
    from autocast_explorer.core.planning.criterion import DEFAULT_CRITERION

    low = result.config.dtype
    p, (_, q) = result.plain, _compared(result)
    said = speed_clause(result)
    follows = PLAN_HEADLINES.get(result.speed_call.kind, "one timing cannot say what to run")
    routes = list(route_names())
    route_words = ", ".join(routes[:-1]) + f" and {routes[-1]}" if len(routes) > 1 else routes[0]
    sentences = (
        f"Measured here: {ms_text(p.median_ms)} per forward in float32 and {ms_text(q.median_ms)} "
        f"under {low} autocast, on {result.environment.threads_text}.",
        f"For the record, {hardware_clause(result)}.",
        f"The Plan tab's search times the other candidates: the {route_words} routes, each lower "
        "dtype, thread counts up to the free cores, and the layers that break the criterion kept "
        "in float32; a candidate wins only when its speedup's 95% interval says it beats plain "
        "float32 eager.",
        f"Find plan (criterion {DEFAULT_CRITERION} unless you type another) answers with the "
        'fastest plan that meets it, with "float32 is fastest here", or with "no plan meets '
        'the criterion"; its chart ranks the layers by the damage each does alone.',
        "So this run does not grade the claim: whether lower precision has something to offer "
        "this model here is what the plan measures.",
    )
    headline = f"{said[:1].upper()}{said[1:]}: {follows}."
    return LessonOutcome("plan", headline, sentences, False, "sensitivity", graded=False)

"""The tutorial's steps as guided experiments, and its closing exercise, as data.

Each lesson explains one idea, names the config to run and the chart that answers it, and has a
`check` that turns the live result into sentences: what *this* torch on *this* CPU did. Where the
measurement contradicts the tutorial (softmax does not stay in float32 when its input is
bfloat16; autocast is not always slower), the outcome says so instead of repeating the tutorial.
The exercise is graded against the measured dtype of the Linear layers, not a fixed key.

Importing this module does not import torch (the window lists lessons while torch loads);
`measure_probe` and `run_lesson` import it when called.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from autocast_explorer.core.documents.reader import cap_text
from autocast_explorer.core.experiment.config import ExperimentConfig, parameter_count

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.agreement import Agreement
    from autocast_explorer.core.experiment.capture import LayerDtypes, LayerRecord
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.experiment.timing import LatencyStats
    from autocast_explorer.core.runtime.progress import CancelFn, ProgressFn

#: Chart ids a lesson can point at, with the name the window gives each chart.
CHARTS: dict[str, str] = {
    "latency": "Latency",
    "dtype": "Dtype per layer",
    "agreement": "Prediction agreement",
    "layers": "Per-layer table",
    "ops": "Op trace",
    "loss": "Training",
    "accuracy": "Accuracy",
}

#: Ops the probe calls directly, as in the tutorial's third snippet.
PROBE_OPS: tuple[str, ...] = ("softmax", "log_softmax", "mean")


@dataclass(frozen=True)
class OpObservation:
    """One op called under autocast on an input of `input_dtype`; what came out."""

    op: str
    input_dtype: str
    output_dtype: str

    @property
    def follows_input(self) -> bool:
        return self.output_dtype == self.input_dtype


@dataclass(frozen=True)
class PathObservation:
    """One transformer forward under autocast with the fast path allowed or not: what ran."""

    fast_path: bool  # allowed (eval + no_grad) or turned off (train mode)
    fused: bool  # whether torch's fused encoder kernel really ran
    encoder_dtype: str  # what the first encoder layer returned under autocast ("" on error)
    error: str = ""


@dataclass(frozen=True)
class Probe:
    """Small live measurements a result does not hold: stored weight dtypes, direct op calls.

    `weight_dtypes`: the dtypes of the model's parameters after one autocast forward.
    `ops`: each of PROBE_OPS on a float32 and on an autocast-dtype input, under autocast.
    """

    autocast_dtype: str
    torch_version: str
    weight_dtypes: tuple[str, ...]
    ops: tuple[OpObservation, ...]
    paths: tuple[PathObservation, ...] = ()  # a transformer's two paths (else empty)

    def path(self, fast_path: bool) -> PathObservation | None:
        return next((p for p in self.paths if p.fast_path == fast_path), None)

    def op(self, name: str, input_dtype: str) -> OpObservation | None:
        for obs in self.ops:
            if obs.op == name and obs.input_dtype == input_dtype:
                return obs
        return None


@dataclass(frozen=True)
class LessonOutcome:
    """What the live measurement showed for one lesson.

    `headline` is one sentence; `sentences` the details, each built from the result's numbers
    and dtypes; `matches_tutorial` whether the tutorial's claim held here. `graded` is False
    when the measurement cannot tell (a speedup too noisy, or straddling "about the same"):
    then neither ✓ nor ≠ is shown.
    """

    lesson_id: str
    headline: str
    sentences: tuple[str, ...]
    matches_tutorial: bool
    chart: str
    graded: bool = True

    @property
    def text(self) -> str:
        return " ".join((self.headline, *self.sentences))


CheckFn = Callable[["ExperimentResult", "Probe | None"], LessonOutcome]


@dataclass(frozen=True)
class Lesson:
    """One guided experiment: read `explanation`, run `config`, look at `chart`, read `check`."""

    id: str
    number: int
    title: str
    explanation: str
    tutorial_claim: str
    config: ExperimentConfig
    chart: str
    uses_probe: bool = False
    try_next: str = ""
    checker: CheckFn | None = field(default=None, repr=False, compare=False)
    #: Whose claim `tutorial_claim` is: "tutorial", or "assumption" for a common belief the
    #: tutorial does not state (the window words its checkmark accordingly).
    claim_by: str = "tutorial"

    def check(self, result: ExperimentResult, probe: Probe | None = None) -> LessonOutcome:
        """Sentences about `result` (and `probe`, for lessons that use one)."""
        if self.checker is None:
            raise RuntimeError(f"lesson {self.id!r} has no check")
        if result.autocast_error:
            return self._autocast_raised(result)
        return self.checker(result, probe)

    def _autocast_raised(self, result: ExperimentResult) -> LessonOutcome:
        """Every check compares the two sides: when autocast's forward raised there is one."""
        return LessonOutcome(
            self.id,
            f"Here the {result.config.dtype} autocast forward raised, so there is nothing to "
            "compare float32 with on this machine.",
            (
                f"torch said: {cap_text(result.autocast_error, 300)}",
                f"The float32 forward took {_ms(result.plain.median_ms)} (median).",
            ),
            False,
            self.chart,
        )


@dataclass(frozen=True)
class LessonRun:
    """A lesson's config run live, its probe (if any) and the outcome of its check."""

    lesson: Lesson
    result: ExperimentResult
    probe: Probe | None
    outcome: LessonOutcome


# ---- helpers over a result ------------------------------------------------------------------
def _linear_layers(result: ExperimentResult) -> list[LayerRecord]:
    return [layer for layer in result.layers if layer.kind == "Linear"]


def _autocast(layer: LayerRecord) -> LayerDtypes:
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


def _dtype_groups(
    layers: Sequence[LayerRecord], pick: Callable[[LayerRecord], str]
) -> list[tuple[str, list[LayerRecord]]]:
    """Layers grouped by a picked dtype, most common first: [(dtype, [layers…]), …]."""
    counts = Counter(pick(layer) for layer in layers)
    return [
        (dtype, [la for la in layers if pick(la) == dtype]) for dtype, _ in counts.most_common()
    ]


def _describe_groups(
    layers: Sequence[LayerRecord], pick: Callable[[LayerRecord], str], verb: str
) -> str:
    parts = [f"{_names(group)} {verb} {dtype}" for dtype, group in _dtype_groups(layers, pick)]
    return "; ".join(parts)


def _ms(value: float) -> str:
    return f"{value:.3g} ms" if value < 100 else f"{value:.0f} ms"


# ---- the five lessons -----------------------------------------------------------------------
def _check_plain(result: ExperimentResult, probe: Probe | None) -> LessonOutcome:
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
            + _describe_groups(layers, lambda la: la.plain.out_dtype, "returned")
            + "."
        )
    agreement, _ = _compared(result)
    sentences = [
        f"The model's output (the logits for {agreement.rows} rows) was {output}."
        if not agreement.no_argmax_reason
        else f"The model's output ({result.config.batch} rows) was {output}.",
        f"A plain forward took {_ms(result.plain.median_ms)} (median of "
        f"{result.plain.samples} timed blocks) for {result.flops / 1e6:,.1f} MFLOP.",
    ]
    return LessonOutcome(
        "plain", headline, tuple(sentences), all_f32 and output == "float32", "dtype"
    )


def _check_linear(result: ExperimentResult, probe: Probe | None) -> LessonOutcome:
    low = result.config.dtype
    linears = _linear_layers(result)
    if not linears:
        return LessonOutcome(
            "linear", "This result records no Linear layers to look at.", (), False, "dtype"
        )
    outs = {_autocast(la).out_dtype for la in linears}
    headline = (
        f"Under autocast ({low}), "
        + _describe_groups(linears, lambda la: _autocast(la).out_dtype, "returned")
        + "; without autocast they returned "
        + "/".join(sorted({la.plain.out_dtype for la in linears}))
        + "."
    )
    sentences = []
    first, first_dtypes = linears[0], _autocast(linears[0])
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


def _check_float32_ops(result: ExperimentResult, probe: Probe | None) -> LessonOutcome:
    low = result.config.dtype
    heads = [la for la in result.layers if la.kind in ("Softmax", "LogSoftmax")]
    activations = [la for la in result.layers if la.kind not in ("Linear", "Softmax", "LogSoftmax")]
    sentences: list[str] = []
    matches = True
    if heads:
        head = heads[0]
        a = _autocast(head)
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
            + _describe_groups(
                activations,
                lambda la: f"{_autocast(la).in_dtype} → {_autocast(la).out_dtype}",
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
    if heads and _autocast(heads[0]).out_dtype == low:
        sentences.append(
            f"In a model, softmax sits after a Linear layer whose output is already {low}, "
            f"so it runs in {low}."
        )
    return LessonOutcome("float32-ops", headline, tuple(sentences), matches, "dtype")


def _check_agreement(result: ExperimentResult, probe: Probe | None) -> LessonOutcome:
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


def _check_timing(result: ExperimentResult, probe: Probe | None) -> LessonOutcome:
    from autocast_explorer.core.experiment.summary import hardware_clause, speed_clause
    from autocast_explorer.core.hardware.capabilities import native_support

    speedup = result.speedup
    low = result.config.dtype
    p, (_, q) = result.plain, _compared(result)
    params = parameter_count(result.config.widths)
    call = result.speed_call
    kind = call.kind
    verdict = ""
    support = native_support(result.environment.cpu_flags, low)
    native = support.native
    if kind == "untimed":
        headline = "Autocast could not be timed in this run."
    elif kind == "faster":
        headline = f"Here autocast was {speedup:.2f}× faster than float32{call.interval_text()}."
        verdict = (
            f"On this CPU the time saved by the {low} maths more than paid for the "
            "conversions, even for this small model."
        )
    elif kind == "slower":
        headline = (
            f"Here autocast was {1 / speedup:.2f}× slower than float32"
            f"{call.interval_text(slower=True)}."
        )
        verdict = (
            f"Here the time saved by the {low} maths did not make up for converting the "
            "weights and activations on every call."
            if native
            else f"Without native {low} arithmetic the {low} maths saved nothing: autocast "
            "paid for converting the weights and activations on every call and then for "
            "maths that ran emulated."
        )
    elif kind == "same":
        within = f", {call.interval.text()}" if call.interval is not None else ""
        headline = f"Here autocast ran at about the same speed as float32 ({speedup:.2f}×{within})."
        verdict = (
            f"At this size the time saved by the {low} maths and the cost of the conversions "
            "roughly cancelled out."
            if native
            else f"Without native {low} arithmetic nothing was saved by the maths; the "
            "conversions and the emulated maths together took about as long as float32."
        )
    else:  # "unclear" or "noisy": no finding, no grade
        said = speed_clause(result)
        headline = f"{said[:1].upper()}{said[1:]}: this run is not graded."
        verdict = (
            f"The medians alone gave {speedup:.2f}×{call.interval_text()}; run it again on a "
            "quieter machine (or with fewer threads) to see which way it goes."
        )
    sentences = [
        f"Median per forward: {_ms(p.median_ms)} in float32, {_ms(q.median_ms)} under autocast "
        f"({p.samples} and {q.samples} timed blocks, taken alternately); first calls took "
        f"{_ms(p.cold_ms)} and {_ms(q.cold_ms)}.",
        f"Each autocast forward converts all {params:,} parameters (weights and biases) to "
        f"{low} before multiplying, for {result.flops / 1e6:,.1f} MFLOP of maths.",
    ]
    if verdict:
        sentences.append(verdict)
    sentences.append(f"For the record, {hardware_clause(result)}.")
    if not native:
        sentences.append(
            f"So nothing here multiplies {low} natively: each {low} matrix product converted "
            "its operands and ran in kernels that compute in float32 inside (torch's own, "
            "oneDNN's emulation or the BLAS library's), at "
            f"{result.gflops('autocast'):,.1f} GFLOP/s against {result.gflops('plain'):,.1f} "
            "GFLOP/s in float32."
        )
    sentences += [f"Note: {w}." for w in result.warnings]
    matches = kind == "slower"
    return LessonOutcome(
        "timing", headline, tuple(sentences), matches, "latency", graded=call.graded
    )


def _mb(count: int) -> str:
    return f"{count / 1e6:.2f} MB"


def _check_training(result: ExperimentResult, probe: Probe | None) -> LessonOutcome:
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


def _check_answers(result: ExperimentResult, probe: Probe | None) -> LessonOutcome:
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


def _check_transformer_paths(result: ExperimentResult, probe: Probe | None) -> LessonOutcome:
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
    this = _autocast(encoders[0]).out_dtype
    path_name = "the fused fast path" if ran_fused else "the ordinary (train-mode) path"
    sentences = [
        f"This run took {path_name}: under {dtype} autocast "
        f"{_describe_groups(encoders, lambda la: _autocast(la).out_dtype, 'returned')}."
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


TUTORIAL_CONFIG = ExperimentConfig()
TRANSFORMER_CONFIG = ExperimentConfig(model="transformer", batch=16, min_time=0.2)

LESSONS: tuple[Lesson, ...] = (
    Lesson(
        id="plain",
        number=1,
        title="Without autocast, everything is float32",
        explanation=(
            "A freshly built PyTorch model stores its weights as 32-bit floats, and a forward "
            "pass with a float32 input does every multiply and add at that precision. This run "
            "is the baseline the other lessons compare against: the tutorial's three-layer MLP "
            "scoring 128 rows, first without autocast. The dtype chart's 'plain' row shows what "
            "each layer produced."
        ),
        tutorial_claim="A Linear layer given float32 input returns float32.",
        config=TUTORIAL_CONFIG,
        chart="dtype",
        checker=_check_plain,
    ),
    Lesson(
        id="linear",
        number=2,
        title="Autocast runs the Linear layers in bfloat16",
        explanation=(
            "Inside torch.autocast('cpu'), PyTorch looks up each operation in a policy. Matrix "
            "products such as the one in a Linear layer are on the 'lower precision' list: "
            "autocast casts the input and a copy of the weights to bfloat16 (the default CPU "
            "autocast dtype), multiplies, and hands back a bfloat16 result. The model itself is "
            "not converted. Compare the two rows of the dtype chart, and look at the first "
            "layer: float32 goes in, yet bfloat16 comes out."
        ),
        tutorial_claim=(
            "Under CPU autocast a Linear layer returns bfloat16 while its weights stay float32."
        ),
        config=TUTORIAL_CONFIG,
        chart="dtype",
        uses_probe=True,
        checker=_check_linear,
    ),
    Lesson(
        id="float32-ops",
        number=3,
        title="Which ops stay in float32?",
        explanation=(
            "Autocast's policy also has a list of ops it forces to float32 for accuracy (losses "
            "such as mse_loss and cross_entropy, prod, cdist…). The tutorial puts softmax and "
            "mean on that list, because it called them on a float32 tensor. Whether an op "
            "keeps float32 or merely follows its input only shows when the input is "
            "bfloat16 – as it is for a softmax placed after a Linear layer. This lesson adds a "
            "softmax head to the model and also calls softmax, log_softmax and mean directly "
            "on float32 and on bfloat16 tensors."
        ),
        tutorial_claim="Softmax and mean stay in float32 under CPU autocast.",
        config=TUTORIAL_CONFIG.replace(head="softmax"),
        chart="dtype",
        uses_probe=True,
        try_next="Try the 'softmax head' preset with float16 as the dtype.",
        checker=_check_float32_ops,
    ),
    Lesson(
        id="agreement",
        number=4,
        title="The predictions still agree",
        explanation=(
            "bfloat16 keeps float32's range but only 8 bits of precision, so every score comes "
            "out slightly different. What usually matters is the predicted class – the largest "
            "score in each row. The agreement chart counts the rows whose prediction is the "
            "same in both modes and shows how large the score differences are."
        ),
        tutorial_claim="The predicted class is the same for every row, and the scores are close.",
        config=TUTORIAL_CONFIG,
        chart="agreement",
        try_next="Raise the input scale (e.g. 100) and watch the differences grow.",
        checker=_check_agreement,
    ),
    Lesson(
        id="timing",
        number=5,
        title="Is autocast faster here?",
        explanation=(
            "Lower precision is only cheaper when the CPU has fast instructions for it "
            "(avx512_bf16 or AMX for bfloat16) and when there is enough arithmetic to hide the "
            "extra work: on every call autocast converts each weight matrix and the activations "
            "to the low-precision dtype. A small model like this one does little maths per "
            "weight, so the conversions weigh heavily. The latency chart shows the medians of "
            "both modes, measured alternately so background noise hits both alike."
        ),
        tutorial_claim="On the tutorial's machine this small model ran slower under autocast.",
        config=TUTORIAL_CONFIG,
        chart="latency",
        try_next="Now try the 'large MLP' preset or the 'batch sweep' preset.",
        checker=_check_timing,
    ),
    Lesson(
        id="training",
        number=6,
        title="Training: what autocast shrinks",
        explanation=(
            "Most people meet autocast in a training loop. Here two copies of the same model, "
            "from the same starting weights, learn the same small classification task on the "
            "same batches: one in float32, one under autocast. The forward's matrix products "
            "run in the low-precision dtype, but the loss is computed in float32 and the "
            "gradients land on float32 parameters. What autocast changes is what autograd "
            "stores between forward and backward: the activations it keeps are low-precision "
            "copies, half the size. The loss chart draws both curves as they train."
        ),
        tutorial_claim=(
            "The loss and the gradients stay float32; what shrinks is the memory saved for "
            "backward."
        ),
        config=TUTORIAL_CONFIG.replace(mode="train"),
        chart="loss",
        try_next=(
            "Try float16 as the dtype, with and without the GradScaler: the outcome counts the "
            "gradient elements that underflowed to zero (the curves only part when some do)."
        ),
        checker=_check_training,
    ),
    Lesson(
        id="transformer-paths",
        number=7,
        title="One transformer layer, two dtypes",
        explanation=(
            "In eval mode under no_grad, torch runs a whole TransformerEncoderLayer as one "
            "fused kernel (its 'fast path'). In train mode, or with the fast path turned off, it "
            "runs attention, the feed-forward, the residual adds and the norms one by one. "
            "Under autocast the two paths can return different dtypes for the same layer and "
            "input. This run uses the fast path; the lesson also measures the layer with it "
            "turned off and compares the two."
        ),
        tutorial_claim=(
            "A layer's output dtype under autocast depends only on the layer, not on how torch "
            "chooses to run it."
        ),
        claim_by="assumption",
        config=TRANSFORMER_CONFIG,
        chart="dtype",
        uses_probe=True,
        try_next="Load the 'Transformer: fast path off' preset and compare the dtype chart.",
        checker=_check_transformer_paths,
    ),
    Lesson(
        id="answers",
        number=8,
        title="Does autocast change the answers?",
        explanation=(
            "Agreement on random inputs says little about a model people use. This step "
            "trains the tutorial's MLP (with 64 inputs, one per pixel) in float32 on real "
            "data, the bundled handwritten digits (8×8 images), then asks the held-out digits "
            "twice: in float32 and under autocast. "
            "The Accuracy view shows both accuracies, an interval for their difference from a "
            "paired bootstrap over the held-out rows, and every digit whose predicted class "
            "changed, drawn with its true label and both answers."
        ),
        tutorial_claim=(
            "(Not in the tutorial.) A trained model gives the same answers under autocast as "
            "in float32."
        ),
        # The tutorial's MLP with 64 inputs, one per pixel: the config the run fits to the data.
        config=TUTORIAL_CONFIG.replace(data="digits", widths=(64, 256, 256, 10)),
        chart="accuracy",
        try_next="Try the CNN, or float16, and see which digits flip.",
        checker=_check_answers,
    ),
)


def lesson(lesson_id: str) -> Lesson:
    """The lesson with this id; KeyError listing the ids otherwise."""
    for item in LESSONS:
        if item.id == lesson_id:
            return item
    raise KeyError(f"no lesson {lesson_id!r}; ids: {', '.join(x.id for x in LESSONS)}")


# ---- the exercise ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Grade:
    """How an answer to the exercise compares with what was measured."""

    answer: str
    expected: str
    correct: bool
    explanation: str


@dataclass(frozen=True)
class Exercise:
    """The tutorial's closing question, graded against the live result, not an answer key."""

    question: str
    choices: tuple[str, ...]

    def expected(self, result: ExperimentResult) -> str:
        """The dtype most Linear layers returned under autocast in `result`."""
        if result.autocast_error:
            raise ValueError("the autocast forward raised: no autocast dtype to grade against")
        linears = _linear_layers(result)
        if not linears:
            raise ValueError("the result has no Linear layers to grade against")
        return _dtype_groups(linears, lambda la: _autocast(la).out_dtype)[0][0]

    def choices_for(self, result: ExperimentResult) -> tuple[str, ...]:
        """The choices, plus the measured answer should it be one nobody expected."""
        measured = self.expected(result)
        return self.choices if measured in self.choices else (*self.choices, measured)

    def grade(self, answer: str, result: ExperimentResult) -> Grade:
        given = answer.strip().removeprefix("torch.").lower()
        try:
            expected = self.expected(result)
        except ValueError:
            why = (
                "The autocast forward raised in this run, so there is nothing to grade by."
                if result.autocast_error
                else "This result records no Linear layers to grade by."
            )
            return Grade(given, "", False, why)
        linears = _linear_layers(result)
        evidence = (
            f"Measured in this run (autocast dtype {result.config.dtype}): "
            + _describe_groups(linears, lambda la: _autocast(la).out_dtype, "returned")
            + "."
        )
        if given == expected:
            explanation = f"Correct: {expected}. {evidence}"
        elif not given:
            explanation = f"No answer given; the measured answer is {expected}. {evidence}"
        else:
            explanation = f"Not quite: the measurement says {expected}, not {given}. {evidence}"
        return Grade(given, expected, given == expected, explanation)


EXERCISE = Exercise(
    question='Under torch.autocast("cpu"), which dtype does a Linear layer use for its maths?',
    choices=("float32", "bfloat16", "float16", "float64"),
)


# ---- live measurement -----------------------------------------------------------------------
def measure_probe(config: ExperimentConfig) -> Probe:
    """Build `config`'s model, run one autocast forward, then probe PROBE_OPS.

    The op dtypes come from the op-policy probe's own cases (core.oppolicy.run_case), so the
    lesson and the Ops tab measure the same way. Small and fast: one forward, six tiny op
    calls; run it where the experiment ran (the worker thread in the window).
    """
    import torch

    from autocast_explorer.core.experiment.model import build
    from autocast_explorer.core.numerics.opcatalog import PROBED_OPS
    from autocast_explorer.core.numerics.oppolicy import run_case
    from autocast_explorer.core.runtime.autocast import TORCH_DTYPES, autocast_context
    from autocast_explorer.core.runtime.dtypes import dtype_name

    low = TORCH_DTYPES[config.dtype]
    model, x = build(config)
    with torch.no_grad(), autocast_context(low):
        model(x)
    weights = tuple(sorted({dtype_name(p.dtype) for p in model.parameters()}))
    specs = {spec.name: spec for spec in PROBED_OPS}
    ops = []
    for case in ("float32", "low"):
        for name in PROBE_OPS:
            seen = run_case(specs[name], case, low)
            ops.append(OpObservation(name, seen.in_dtypes[0], seen.out_dtype or "error"))
    paths = measure_paths(config) if config.model == "transformer" else ()
    return Probe(config.dtype, torch.__version__, weights, tuple(ops), paths)


def measure_paths(config: ExperimentConfig) -> tuple[PathObservation, ...]:
    """One autocast forward of the transformer with the fast path allowed, one with it off."""
    from autocast_explorer.core.experiment.capture import record_forward
    from autocast_explorer.core.experiment.families import family
    from autocast_explorer.core.experiment.model import build
    from autocast_explorer.core.runtime.autocast import TORCH_DTYPES

    low = TORCH_DTYPES[config.dtype]
    fam = family(config)
    observations = []
    for fast in (True, False):
        cfg = config.replace(fast_path=fast)
        model, x = build(cfg)
        seen = record_forward(model, x, low)
        names = [c.name for c in seen.layers]
        encoder = next((c for c in seen.layers if c.kind == "TransformerEncoderLayer"), None)
        observations.append(
            PathObservation(
                fast_path=fast,
                fused=bool(getattr(fam, "fused", lambda _: False)(names)),
                encoder_dtype=encoder.out_dtype if encoder is not None else "",
                error=seen.error,
            )
        )
    return tuple(observations)


def run_lesson(
    item: Lesson,
    config: ExperimentConfig | None = None,
    progress: ProgressFn | None = None,
    cancel: CancelFn | None = None,
) -> LessonRun:
    """Run a lesson's config (or `config`), its probe if it has one, and its check.

    For the window's worker thread: one call does all the torch work of a lesson step.
    """
    from autocast_explorer.core.experiment.engine import run_experiment

    chosen = config or item.config
    result = run_experiment(chosen, progress=progress, cancel=cancel)
    probe = measure_probe(chosen) if item.uses_probe else None
    return LessonRun(item, result, probe, item.check(result, probe))

"""The tutorial's steps as guided experiments, and its closing exercise, as data.

Each lesson explains one idea, names the config to run and the chart that answers it, and has a
`check` (core.learning.lesson_checks) that turns the live result into sentences: what *this*
torch on *this* CPU did. Where the measurement contradicts the tutorial (softmax does not stay
in float32 when its input is bfloat16; autocast is not always slower), the outcome says so
instead of repeating the tutorial. The exercise (core.learning.exercise) is graded against the
measured dtype of the Linear layers, not a fixed key.

Importing this module does not import torch (the window lists lessons while torch loads);
`measure_probe` and `run_lesson` import it when called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.learning import lesson_checks as checks
from autocast_explorer.core.learning.exercise import EXERCISE, Exercise, Grade
from autocast_explorer.core.learning.lesson_types import (
    CHARTS,
    EARLIER_CHART_IDS,
    FALLBACK_CHART,
    PROBE_OPS,
    CheckFn,
    Lesson,
    LessonOutcome,
    LessonRun,
    OpObservation,
    PathObservation,
    Probe,
)

if TYPE_CHECKING:
    from autocast_explorer.core.runtime.progress import CancelFn, ProgressFn

#: The lessons' names, with those of the parts they are made of (the window, the tester's kit
#: and the tests import them all from here).
__all__ = [
    "CHARTS",
    "EARLIER_CHART_IDS",
    "EXERCISE",
    "FALLBACK_CHART",
    "LESSONS",
    "PROBE_OPS",
    "TRANSFORMER_CONFIG",
    "TUTORIAL_CONFIG",
    "CheckFn",
    "Exercise",
    "Grade",
    "Lesson",
    "LessonOutcome",
    "LessonRun",
    "OpObservation",
    "PathObservation",
    "Probe",
    "lesson",
    "measure_paths",
    "measure_probe",
    "run_lesson",
]

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
        checker=checks.check_plain,
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
        checker=checks.check_linear,
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
        checker=checks.check_float32_ops,
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
        checker=checks.check_agreement,
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
        checker=checks.check_timing,
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
        checker=checks.check_training,
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
        checker=checks.check_transformer_paths,
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
        tutorial_claim="A trained model gives the same answers under autocast as in float32.",
        claim_by="assumption",  # the tutorial never says so
        # The tutorial's MLP with 64 inputs, one per pixel: the config the run fits to the data.
        config=TUTORIAL_CONFIG.replace(data="digits", widths=(64, 256, 256, 10)),
        chart="accuracy",
        try_next="Try the CNN, or float16, and see which digits flip.",
        checker=checks.check_answers,
    ),
    Lesson(
        id="plan",
        number=9,
        title="From one timing to a plan",
        explanation=(
            "Lesson 5 timed one way of lowering precision: eager autocast around the whole "
            "model. Faster or slower, that is one candidate. A plan also tries torch.compile, "
            "the implicit bf16 route, other thread counts, and keeping the few layers that "
            "hurt the answers in float32, and times each against plain float32 with an "
            "interval, so that 'faster' means the interval says so. This step times the "
            "tutorial's model again; then Find plan in the Plan tab searches, and its chart "
            "ranks the layers by the damage each one does when it alone runs in lower precision."
        ),
        tutorial_claim=(
            "If autocast made a model slower, lower precision has nothing to offer it on this CPU."
        ),
        claim_by="assumption",
        config=TUTORIAL_CONFIG,
        chart="sensitivity",
        try_next=(
            "Press Find plan in the Plan tab, then try the CNN and the transformer: the plan "
            "changes with the model and with the CPU."
        ),
        checker=checks.check_plan,
    ),
)


def lesson(lesson_id: str) -> Lesson:
    """The lesson with this id; KeyError listing the ids otherwise."""
    for item in LESSONS:
        if item.id == lesson_id:
            return item
    raise KeyError(f"no lesson {lesson_id!r}; ids: {', '.join(x.id for x in LESSONS)}")


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

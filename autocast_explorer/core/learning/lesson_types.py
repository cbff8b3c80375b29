"""What a lesson is made of: its step, the live probe it may use, and the outcome of its check.

No torch here (the window lists lessons while torch loads): results are only annotated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from autocast_explorer.core.documents.reader import cap_text
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.pace import ms_text

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult

#: The views a lesson can point at, by the id the window registers each under (a tab, or a chart
#: inside one), with how a lesson names it.
CHARTS: dict[str, str] = {
    "latency": "Latency",
    "dtype": "Dtype per layer",
    "agreement": "Prediction agreement",
    "layers": "Per-layer table",
    "optrace": "Op trace",
    "loss": "Training",
    "accuracy": "Accuracy",
    "sensitivity": "Layer sensitivity",
}
#: Ids read as today's view ids: "ops" named the op trace before lesson ids were view ids (the
#: view "ops" is the op-policy probe).
EARLIER_CHART_IDS: dict[str, str] = {"ops": "optrace"}
#: What answers when this window has no view a lesson names: every run draws its dtypes.
FALLBACK_CHART = "dtype"

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
                f"The float32 forward took {ms_text(result.plain.median_ms)} (median).",
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

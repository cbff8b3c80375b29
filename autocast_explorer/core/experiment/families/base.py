"""What every model family tells the engine, the guards, the sweeps and the command line.

A family answers questions about a config without torch (its parameters, validation, FLOPs,
activation sizes, the GEMMs one forward runs), so the window can validate and the guards can
refuse before torch is loaded; it builds the model and input with torch only when asked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from autocast_explorer.core.experiment.config import TRAINING_STEP_FORWARDS, ExperimentConfig
from autocast_explorer.core.experiment.config_fields import FieldSpec, field_specs
from autocast_explorer.core.experiment.input_kind import InputKind
from autocast_explorer.core.runtime.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Sequence

    import torch

    from autocast_explorer.core.data.dataset import Dataset
    from autocast_explorer.core.experiment.input_record import InputRecord

#: Common fields that mean something only for some families (the rest apply to all).
OPTIONAL_COMMON = ("widths", "activation", "head")
#: How a family's rows of real data are shaped (`Family.rows`): flat, or C × H × W images.
ROWS_OF_FEATURES = "features"
ROWS_OF_IMAGES = "images"
#: What a family's FLOP count covers (its `gemms`), as a sweep's roofline states it.
GEMM_FLOPS_FORMULA = (
    "FLOPs = 2 per multiply-add of the model's matrix products (convolutions as implicit "
    "GEMMs, attention projections and score products, recurrent projections at every step; "
    "norms, pooling and activations not counted)"
)


@dataclass(frozen=True)
class FamilyParam:
    """One parameter of a family: a config field of the "family" part (its type, default and
    rule are the field's) and what it means in this family ('' → the field's own sentence)."""

    name: str
    meaning: str = ""

    @property
    def spec(self) -> FieldSpec:
        """The config field's definition (KeyError: a family's parameter must be a field)."""
        return field_specs(ExperimentConfig)[self.name]

    @property
    def default(self) -> Any:
        return _DEFAULTS[self.name]

    @property
    def help(self) -> str:
        """What the flag and the window's tooltip say: the meaning and the default."""
        spec = self.spec
        return dataclasses.replace(spec, help=self.meaning or spec.help).described(self.default)

    @property
    def kind(self) -> str:
        """How it is typed: "int", "ints" (a comma list), "choice" or "bool"."""
        if isinstance(self.default, bool):
            return "bool"
        if isinstance(self.default, tuple):
            return "ints"
        return "choice" if self.choices else "int"

    @property
    def choices(self) -> tuple[str, ...]:
        rule = self.spec.rule
        return tuple(rule.bounds().get("enum", ())) if rule else ()

    @property
    def minimum(self) -> int:
        rule = self.spec.rule
        return int(rule.bounds().get("minimum", 1)) if rule else 1

    @property
    def flag(self) -> str:
        """The command-line flag: config field `d_model` is `--d-model`."""
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class SweptSize:
    """A size of a family's model a sweep can vary: its name (a config field, or the MLP's
    `width`: every hidden width at once), how titles, `--param`'s help and the Sweeps tab say
    it, and its default values (LOW, HIGH, COUNT: log-spaced, as `sweep --values` reads them)."""

    name: str
    label: str
    default: tuple[int, int, int]


#: Sizes more than one family sweeps (each family lists those its model has).
SEQUENCE_LENGTH = SweptSize("seq", "sequence length", (8, 512, 7))
IMAGE_SIDE = SweptSize("image", "image side", (8, 128, 5))


@dataclass(frozen=True)
class Gemm:
    """One matrix product a forward runs `count` times: (m × k) @ (k × n).

    Convolutions count as their implicit GEMM (m = output pixels, k = in-channels × kernel).
    The time guard's estimator can time these shapes on this CPU instead of a stand-in GEMM.
    """

    op: str
    m: int
    k: int
    n: int
    count: int = 1

    @property
    def flops(self) -> int:
        return 2 * self.m * self.k * self.n * self.count

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "m": self.m, "k": self.k, "n": self.n, "count": self.count}


@dataclass(frozen=True)
class Construction:
    """A family's torch-only builders of its model and input from a config's JSON dict.

    Both live in one module of families/construct/, which the explorer runs and reproduce.py
    pastes whole (core/reports/reproduce.py): registering them is all a family does for both.
    """

    model: Callable[[Mapping[str, Any]], torch.nn.Module]
    input: Callable[[Mapping[str, Any]], torch.Tensor]


class Family:
    """Base of the four families; subclasses fill in the torch-free questions and `construction`
    (the user's own model overrides `build_*` instead)."""

    name: str = ""
    title: str = ""
    params: tuple[FamilyParam, ...] = ()
    #: Which of OPTIONAL_COMMON this family uses.
    uses: frozenset[str] = frozenset({"activation", "head"})
    #: The sizes a sweep can vary, besides batch (every family sweeps batch).
    sweeps: tuple[SweptSize, ...] = ()
    #: How it takes rows of real data (`data`): ROWS_OF_FEATURES, ROWS_OF_IMAGES, or "" for
    #: synthetic inputs only. A family that takes rows fits a config to them (`fit_data`) and
    #: says what the data sets in `data_sets` (the window's note under the data selector).
    rows: str = ""
    data_sets: str = ""
    #: What `flops` counts (a sweep's roofline says it beside the points).
    flops_formula: str = GEMM_FLOPS_FORMULA
    #: What its input holds (the result's `input.kind`).
    input_kind: InputKind = "float"

    # ---- torch-free -----------------------------------------------------------------------
    def validate(self, config: ExperimentConfig) -> None:
        """Raise ConfigError naming the field for the first broken rule of this family: each
        parameter's own rule (the config field's), then what a family adds across fields."""
        for param in self.params:
            rule = param.spec.rule
            refusal = rule.refuse(getattr(config, param.name), config) if rule else None
            if refusal is not None:
                raise ConfigError(param.name, refusal)

    def describe(self, config: ExperimentConfig) -> str:
        """A short line naming the model, e.g. 'CNN 3→32→64 · image 32 · 10 classes'."""
        raise NotImplementedError

    def gemms(self, config: ExperimentConfig) -> tuple[Gemm, ...]:
        """The matrix products of one forward (what the FLOP count and estimators use)."""
        raise NotImplementedError

    def forecast_from_trace(self, config: ExperimentConfig) -> bool:
        """Whether the time guard forecasts its forward from every op of it traced (shadow_run)
        rather than from `gemms`: where the kernels torch picks are no GEMM (a convolution's
        own path, oneDNN's LSTM layer, which may not run in the low dtype at all) and the ops
        between the products (norms, pooling) take a real share of the time."""
        return False

    def flops(self, config: ExperimentConfig) -> int:
        """Multiply-adds of one forward's matrix products, 2 FLOPs each."""
        return sum(g.flops for g in self.gemms(config))

    def parameter_count(self, config: ExperimentConfig) -> int:
        raise NotImplementedError

    def activation_elements(self, config: ExperimentConfig) -> int:
        """Elements of the input and of every layer's output in one forward (an estimate)."""
        raise NotImplementedError

    def input_elements(self, config: ExperimentConfig) -> int:
        raise NotImplementedError

    def training_step_flops(self, config: ExperimentConfig) -> int:
        """One training step: forward + weight gradients + input gradients, each about one
        forward (a family that counts exactly says so)."""
        return TRAINING_STEP_FORWARDS * self.flops(config)

    def classes(self, config: ExperimentConfig) -> int:
        """How many logits its output has per row: what training's cross-entropy counts."""
        return config.classes

    def fit_data(self, config: ExperimentConfig, dataset: Dataset) -> ExperimentConfig:
        """`config` with its input and classes taken from `dataset` (DataError if the rows do
        not fit); only a family that takes rows (`rows`) answers."""
        raise NotImplementedError(f"the {self.name} family takes no rows of real data")

    @property
    def sweep_params(self) -> tuple[str, ...]:
        """The names of the sizes it sweeps (besides batch)."""
        return tuple(size.name for size in self.sweeps)

    def sizes_known(self, config: ExperimentConfig) -> bool:
        """Whether the counts above come without running anything: formulas here; the user's
        model only once its probe is made (after memory ran out, it is not run again)."""
        return True

    def sweep_config(self, config: ExperimentConfig, param: str, value: int) -> ExperimentConfig:
        """`config` with a swept family parameter set to `value` (batch is handled outside)."""
        if param not in self.sweep_params:
            choices = ", ".join(("batch", *self.sweep_params))
            raise ConfigError(
                "param", f"{param} does not apply to the {self.name} family (sweep {choices})"
            )
        return config.replace(**{param: value})

    def sweep_label(self, param: str) -> str:
        """How a sweep of `param` reads in titles (its SweptSize's label)."""
        return next((size.label for size in self.sweeps if size.name == param), param)

    # ---- torch ----------------------------------------------------------------------------
    def construction(self) -> Construction:
        """The family's builders (imported when asked: they import torch)."""
        raise NotImplementedError

    def build_model(self, config: ExperimentConfig) -> torch.nn.Module:
        """Seeded, in the mode the measurement uses (eval unless the family says otherwise)."""
        return self.construction().model(config.to_dict())

    def build_input(self, config: ExperimentConfig) -> torch.Tensor:
        """Drawn after the model from the same RNG stream, shaped for the family."""
        return self.construction().input(config.to_dict())

    def record_input(
        self, config: ExperimentConfig, model: torch.nn.Module, batches: Sequence[torch.Tensor]
    ) -> InputRecord:
        """The result's `input`: `batches` fed to `model` (the first one's shape)."""
        from autocast_explorer.core.experiment.input_record import first_argument, input_record

        return input_record(self.input_kind, first_argument(model), batches)


#: Every config field's default (a parameter's default is its field's).
_DEFAULTS: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(ExperimentConfig)}

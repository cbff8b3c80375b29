"""Experiment configuration: one frozen dataclass composed of typed parts, validated on
construction.

Validation lives here (not in the CLI or the window) so every front end shows the same message,
naming the field and the rule that was broken. Each field is declared once, in its part
(config_parts.py), with its help sentence and rule (config_fields.py). This module must not
import torch: the window validates input while torch is still loading.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Any, Self, TypeVar

from autocast_explorer.core.experiment.config_fields import PART_CLASSES, field_specs, part_fields
from autocast_explorer.core.experiment.config_parts import (
    DEFAULT_ROUTES,
    MAX_TIME_FACTOR,
    ConfigParts,
    DataPart,
    FamilyPart,
    InterventionsPart,
    MeasurementPart,
    ModelPart,
    TrainingPart,
    UserModelPart,
)
from autocast_explorer.core.experiment.config_rules import (
    built_in_models,
    family_rules,
    parse_widths,
)
from autocast_explorer.core.experiment.model_args import normalise_model_args
from autocast_explorer.core.experiment.route_kinds import route_names
from autocast_explorer.core.runtime.errors import ConfigError

#: A training step costs about three forwards: the forward, then the backward's two GEMMs per
#: layer (gradient of the input and of the weight), each the size of the forward's.
TRAINING_STEP_FORWARDS = 3
P = TypeVar("P")


@dataclass(frozen=True)
class ExperimentConfig(
    InterventionsPart,
    TrainingPart,
    UserModelPart,
    DataPart,
    FamilyPart,
    MeasurementPart,
    ModelPart,
):
    """Everything that defines one plain-vs-autocast measurement.

    Composed of the parts in config_parts.py (a dataclass takes its bases' fields last base
    first: model, measurement, family, data, user model, training, interventions), so the flat
    constructor, attributes and JSON are every part's fields, and each part is also a typed
    object: `config.measurement.batch`, `config.training`, `config.parts.model`.
    `min_time` is the measurement budget: seconds of timed forwards per mode; a run goes on
    past it until its speedup's interval is within ±5%, for at most `max_time` seconds per
    mode. `mode` "train" trains a float32 and an autocast copy side by side for `steps` steps
    instead of timing forwards.
    """

    def __post_init__(self) -> None:
        channels = self.channels
        if isinstance(channels, str):
            channels = parse_widths(channels, "channels")
        if isinstance(channels, list | tuple):
            object.__setattr__(self, "channels", tuple(channels))
        widths = self.widths
        if isinstance(widths, str):
            widths = parse_widths(widths)
        try:
            widths = tuple(widths)
        except TypeError:
            raise ConfigError("widths", "must be a list of layer widths") from None
        object.__setattr__(self, "widths", widths)
        object.__setattr__(self, "model_args", normalise_model_args(self.model_args))
        if isinstance(self.keep_float32, list):  # JSON and repeated flags give a list
            object.__setattr__(self, "keep_float32", tuple(self.keep_float32))
        shape = self.input_shape
        if isinstance(shape, str):
            shape = parse_widths(shape, "input_shape") if shape.strip() else None
        if isinstance(shape, list | tuple):
            object.__setattr__(self, "input_shape", tuple(shape))
        routes = self.routes
        if isinstance(routes, str):
            routes = tuple(r.strip() for r in routes.split(","))
        if isinstance(routes, list | tuple):
            # In registration order (eager first, the reference), whatever order they were named.
            known = route_names()
            ranked = sorted(routes, key=lambda r: known.index(r) if r in known else len(known))
            object.__setattr__(self, "routes", tuple(ranked))
        validate(self)

    def replace(self, **changes: Any) -> Self:
        """A copy with some fields changed (validated like any other config); a part given
        whole (`measurement=config.measurement.replace(…)`) changes its fields."""
        fields: dict[str, Any] = {}
        for name, value in changes.items():
            if type(value) in PART_CLASSES.values():
                fields.update(_values(value, type(value)))
            else:
                fields[name] = value
        return dataclasses.replace(self, **fields)

    # ---- the parts, each a typed object of its fields' values ------------------------------
    def _part(self, cls: type[P]) -> P:
        return cls(**_values(self, cls))

    @property
    def parts(self) -> ConfigParts:
        """Every part (the model and data parts are reached here: `config.model` and
        `config.data` are fields)."""
        return ConfigParts(
            model=self._part(ModelPart),
            measurement=self.measurement,
            family=self.family,
            data=self._part(DataPart),
            user_model=self.user_model,
            training=self.training,
            interventions=self.interventions,
        )

    @property
    def measurement(self) -> MeasurementPart:
        return self._part(MeasurementPart)

    @property
    def family(self) -> FamilyPart:
        return self._part(FamilyPart)

    @property
    def user_model(self) -> UserModelPart:
        return self._part(UserModelPart)

    @property
    def training(self) -> TrainingPart:
        return self._part(TrainingPart)

    @property
    def interventions(self) -> InterventionsPart:
        return self._part(InterventionsPart)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: the common fields, `model`, and the family's own parameters.

        An MLP writes `widths` and every field it always has; another family writes its
        parameters instead of `widths`, so a file says only what defined its model.
        """
        own = family_rules().own_fields(self)
        user = self.is_user_model
        data: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name in FAMILY_FIELDS and f.name not in own:
                continue
            if f.name in USER_MODEL_FIELDS and not user:
                continue
            if f.name == "widths" and self.model != "mlp":
                continue
            if f.name in DATA_FIELDS and self.data == "synthetic":
                continue
            if f.name == "routes" and self.routes == DEFAULT_ROUTES:
                continue  # today's run: files stay as they were before routes existed
            if f.name == "keep_float32" and not self.keep_float32:
                continue  # nothing kept: files stay as they were before interventions
            data[f.name] = getattr(self, f.name)
        if "widths" in data:
            data["widths"] = list(self.widths)
        if "channels" in data:
            data["channels"] = list(self.channels)
        if user:
            data["seq"] = self.seq  # a token model's length
            data["model_args"] = {
                k: list(v) if isinstance(v, tuple) else v for k, v in self.model_args
            }
            data["input_shape"] = list(self.input_shape) if self.input_shape else None
        if "routes" in data:
            data["routes"] = list(self.routes)
        if "keep_float32" in data:
            data["keep_float32"] = list(self.keep_float32)
        return data

    @property
    def time_limit(self) -> float:
        """Seconds per mode a run may take while narrowing its interval (`max_time` or default)."""
        return self.max_time if self.max_time is not None else MAX_TIME_FACTOR * self.min_time

    @property
    def is_user_model(self) -> bool:
        """Whether `model` is a spec of the user's own model rather than a built-in family."""
        return self.model not in built_in_models()

    @property
    def title(self) -> str:
        """The model in a few words: 'MLP 256,256,256,10', 'CNN 3→32→64 · image 32 · …'."""
        return family_rules().describe(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExperimentConfig:
        """Build from JSON, ignoring unknown keys so newer files still load; validates."""
        if not isinstance(data, dict):
            raise ConfigError("config", "must be a JSON object")
        lists = {"widths": "layer widths", "channels": "channel counts"}
        for key, noun in lists.items():  # text such as "3,8" is for people, not documents
            if key in data and not isinstance(data[key], list | tuple):
                raise ConfigError(key, f"must be a list of {noun}")
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


#: The fields of each part, in field order (a built-in family's document leaves out the user
#: model's; a synthetic run's, the data's; sweeps and placements ignore training's).
FAMILY_FIELDS: tuple[str, ...] = part_fields(ExperimentConfig, "family")
USER_MODEL_FIELDS: tuple[str, ...] = part_fields(ExperimentConfig, "user model")
DATA_FIELDS: tuple[str, ...] = part_fields(ExperimentConfig, "data")
TRAINING_FIELDS: tuple[str, ...] = part_fields(ExperimentConfig, "training")


def _values(source: Any, cls: type) -> dict[str, Any]:
    """`source`'s values of the fields of dataclass `cls`."""
    return {f.name: getattr(source, f.name) for f in dataclasses.fields(cls)}


def validate(config: ExperimentConfig) -> None:
    """Raise ConfigError for the first broken rule (field name + rule in the message): every
    field's own rule in field order, then the family's (it checks its own parameters)."""
    for name, field_spec in field_specs(ExperimentConfig).items():
        if field_spec.part == "family" or field_spec.rule is None:
            continue
        refusal = field_spec.rule.refuse(getattr(config, name), config)
        if refusal is not None:
            raise ConfigError(name, refusal)
    family_rules().validate(config)


def parameter_count(widths: tuple[int, ...]) -> int:
    """Weights and biases of the Linear layers."""
    return sum(a * b + b for a, b in itertools.pairwise(widths))


def flops_per_forward(widths: tuple[int, ...], batch: int) -> int:
    """Multiply-adds of the Linear layers counted as 2 FLOPs each (2·B·in·out per layer)."""
    return sum(2 * batch * a * b for a, b in itertools.pairwise(widths))


def flops_per_training_step(widths: tuple[int, ...], batch: int) -> int:
    """Forward, then backward: every layer's weight gradient (one more GEMM of the forward's
    size) and every layer's input gradient except the first's (the input needs none)."""
    forward = flops_per_forward(widths, batch)
    first = 2 * batch * widths[0] * widths[1] if len(widths) > 1 else 0
    return forward + forward + (forward - first)

"""ExperimentConfig is composed of typed parts: each part a frozen dataclass whose fields are
declared once (config_parts.py), given back as an object, while the flat constructor, the flat
attributes and the flat JSON stay as they were."""

from __future__ import annotations

import dataclasses
import typing

import pytest

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.config_fields import (
    PART_CLASSES,
    PARTS,
    config_part,
    field_spec,
    part_fields,
    spec,
    whole,
)
from autocast_explorer.core.experiment.config_parts import (
    ConfigParts,
    DataPart,
    InterventionsPart,
    MeasurementPart,
    ModelPart,
    TrainingPart,
)
from autocast_explorer.core.runtime.errors import ConfigError

CONFIG = ExperimentConfig(
    widths=(8, 4, 2), batch=6, dtype="float16", mode="train", steps=7, data="digits"
)


def test_each_part_is_an_object_of_the_config_s_values():
    assert CONFIG.measurement == MeasurementPart(batch=6, dtype="float16")
    assert (CONFIG.measurement.batch, CONFIG.measurement.dtype) == (6, "float16")
    assert CONFIG.training == TrainingPart(mode="train", steps=7)
    assert CONFIG.parts.model == ModelPart(widths=(8, 4, 2))
    assert CONFIG.parts.data == DataPart(data="digits")
    assert CONFIG.interventions == InterventionsPart()
    assert CONFIG.family.channels == (3, 32, 64) and CONFIG.user_model.input_kind == "auto"


def test_a_part_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        CONFIG.measurement.batch = 3  # type: ignore[misc]


def test_the_parts_are_the_config_s_fields_in_order_and_nothing_else():
    """The config's fields are its parts' fields (no second list): each part class holds
    exactly the fields its specs name, and ConfigParts has one typed slot per part."""
    assert set(PART_CLASSES) == set(PARTS)
    assert set(ExperimentConfig.__bases__) == set(PART_CLASSES.values())
    order = [f.name for cls in PART_CLASSES.values() for f in dataclasses.fields(cls)]
    assert order == [f.name for f in dataclasses.fields(ExperimentConfig)]
    for part, cls in PART_CLASSES.items():
        assert tuple(f.name for f in dataclasses.fields(cls)) == part_fields(ExperimentConfig, part)
    hints = typing.get_type_hints(ConfigParts)
    assert hints == {part.replace(" ", "_"): cls for part, cls in PART_CLASSES.items()}
    for name, cls in hints.items():
        assert type(getattr(CONFIG.parts, name)) is cls


def test_replace_takes_fields_or_whole_parts_and_validates():
    wider = CONFIG.replace(measurement=CONFIG.measurement.replace(batch=9), steps=3)
    assert (wider.batch, wider.steps, wider.dtype) == (9, 3, "float16")
    assert dataclasses.replace(CONFIG, batch=5).measurement.batch == 5
    with pytest.raises(ConfigError) as refused:
        CONFIG.replace(training=CONFIG.training.replace(steps=0))
    assert refused.value.field == "steps"
    with pytest.raises(ConfigError, match="batch"):
        dataclasses.replace(CONFIG, batch=0)


def test_the_flat_constructor_attributes_and_json_stay():
    config = ExperimentConfig(widths="16,8,4", batch=32, seed=3)
    assert (config.widths, config.batch, config.seed) == ((16, 8, 4), 32, 3)
    assert set(config.to_dict()) == {
        "widths", "batch", "seed", "dtype", "threads", "activation", "head", "atol", "rtol",
        "topk", "input_scale", "input_distribution", "min_time", "max_time", "allow_slow",
        "memory_budget_mb", "model", "mode", "steps", "lr", "optimizer", "scaler",
    }  # fmt: skip
    assert ExperimentConfig.from_dict(config.to_dict()) == config


def test_a_field_outside_a_part_and_a_part_named_twice_are_refused():
    @dataclasses.dataclass(frozen=True)
    class Loose:
        size: int = spec(1, "a size", whole(1))

    with pytest.raises(TypeError, match="size"):
        field_spec(dataclasses.fields(Loose)[0])
    with pytest.raises(ValueError, match="measurement"):
        config_part("measurement")(Loose)

import pytest

from autocast_explorer.core.experiment.config import (
    ConfigError,
    ExperimentConfig,
    flops_per_forward,
)
from autocast_explorer.core.experiment.config_rules import parse_widths


def test_defaults_are_the_tutorial_example():
    config = ExperimentConfig()
    assert config.widths == (256, 256, 256, 10)
    assert config.batch == 128
    assert config.seed == 0
    assert config.dtype == "bfloat16"
    assert config.activation == "relu"
    assert config.head == "none"
    assert config.atol == 0.05
    assert config.threads is None


def test_widths_accept_text_and_lists():
    assert ExperimentConfig(widths="8, 4,2").widths == (8, 4, 2)
    assert ExperimentConfig(widths=[8, 2]).widths == (8, 2)
    assert parse_widths("256,256,256,10") == (256, 256, 256, 10)


@pytest.mark.parametrize(
    ("changes", "field", "fragment"),
    [
        ({"widths": (8,)}, "widths", "at least 2 entries"),
        ({"widths": ()}, "widths", "at least 2 entries"),
        ({"widths": (8, 0)}, "widths", "positive integer"),
        ({"widths": (8, -3)}, "widths", "positive integer"),
        ({"widths": (8, 2.5)}, "widths", "whole number"),
        ({"widths": (8, True)}, "widths", "whole number"),
        ({"widths": "8,,2"}, "widths", "empty entry"),
        ({"widths": "8,x"}, "widths", "not a whole number"),
        ({"widths": ""}, "widths", "at least 2"),
        ({"widths": (8, 2**21)}, "widths", "at most"),
        ({"widths": tuple([4] * 70)}, "widths", "at most 65 entries"),
        ({"batch": 0}, "batch", "≥ 1"),
        ({"batch": 1.5}, "batch", "≥ 1"),
        ({"seed": -1}, "seed", "integer"),
        ({"dtype": "float64"}, "dtype", "bfloat16, float16"),
        ({"threads": 0}, "threads", "in 1 …"),
        ({"activation": "swish"}, "activation", "relu"),
        ({"head": "sigmoid"}, "head", "softmax"),
        ({"atol": -0.1}, "atol", "in 0 …"),
        ({"atol": float("nan")}, "atol", "in 0 …"),
        ({"rtol": -1.0}, "rtol", "in 0 …"),
        ({"topk": 0}, "topk", "≥ 1"),
        ({"input_scale": 0.0}, "input_scale", "1e-6"),
        ({"input_distribution": "cauchy"}, "input_distribution", "normal"),
        ({"min_time": 0.0}, "min_time", "seconds"),
        ({"allow_slow": "yes"}, "allow_slow", "true or false"),
        ({"memory_budget_mb": 0}, "memory_budget_mb", "> 0"),
    ],
)
def test_every_rule_names_field_and_rule(changes, field, fragment):
    with pytest.raises(ConfigError) as info:
        ExperimentConfig(**changes)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")
    assert fragment in str(info.value)


def test_round_trip_through_dict():
    config = ExperimentConfig(widths=(8, 4, 3), batch=5, dtype="float16", threads=1, head="softmax")
    assert ExperimentConfig.from_dict(config.to_dict()) == config


def test_from_dict_ignores_unknown_keys_but_validates():
    assert ExperimentConfig.from_dict({"widths": [4, 2], "future": 1}).widths == (4, 2)
    with pytest.raises(ConfigError):
        ExperimentConfig.from_dict({"widths": [4]})


def test_flops_count_two_per_multiply_add():
    assert flops_per_forward((256, 256, 256, 10), 128) == 2 * 128 * (256 * 256 * 2 + 256 * 10)


@pytest.mark.parametrize(
    ("changes", "field", "fragment"),
    [
        ({"mode": "fly"}, "mode", "infer, train"),
        ({"steps": 0}, "steps", "1 …"),
        ({"steps": 10**7}, "steps", "100,000"),
        ({"steps": 2.5}, "steps", "whole number"),
        ({"lr": 0}, "lr", "> 0"),
        ({"lr": -0.1}, "lr", "> 0"),
        ({"lr": float("nan")}, "lr", "finite"),
        ({"lr": float("inf")}, "lr", "finite"),
        ({"optimizer": "adam"}, "optimizer", "sgd, adamw"),
        ({"scaler": "no"}, "scaler", "true or false"),
    ],
)
def test_training_rules_name_the_field(changes, field, fragment):
    with pytest.raises(ConfigError) as info:
        ExperimentConfig(**changes)
    assert info.value.field == field
    assert fragment in str(info.value)


def test_training_fields_come_last_but_the_interventions_and_default_to_inference():
    import dataclasses

    names = [f.name for f in dataclasses.fields(ExperimentConfig)]
    assert names[-6:] == ["mode", "steps", "lr", "optimizer", "scaler", "keep_float32"]
    config = ExperimentConfig()
    assert (config.mode, config.steps, config.optimizer, config.scaler) == (
        "infer",
        50,
        "sgd",
        True,
    )


def test_training_step_flops_count_forward_and_backward():
    from autocast_explorer.core.experiment.config import flops_per_training_step

    forward = flops_per_forward((8, 4, 2), 3)
    first = 2 * 3 * 8 * 4
    assert flops_per_training_step((8, 4, 2), 3) == 3 * forward - first

"""Each config field is defined once (config_parts.py: `spec(default, help, rule)` in its
part), and the family registry agrees with the config's family part: the checks that keep it
so."""

from __future__ import annotations

import dataclasses

import pytest

from autocast_explorer.cli import build_parser
from autocast_explorer.core.experiment.config import (
    DATA_FIELDS,
    FAMILY_FIELDS,
    TRAINING_FIELDS,
    USER_MODEL_FIELDS,
    ExperimentConfig,
)
from autocast_explorer.core.experiment.config_fields import (
    PARTS,
    field_specs,
    number,
    part_fields,
    whole,
)
from autocast_explorer.core.experiment.families import FAMILIES

SPECS = field_specs(ExperimentConfig)
DEFAULTS = {f.name: f.default for f in dataclasses.fields(ExperimentConfig)}


def test_every_field_is_declared_with_a_part_a_sentence_and_a_rule():
    assert list(SPECS) == list(DEFAULTS)
    for name, spec in SPECS.items():
        assert spec.part in PARTS, name
        assert spec.sentence() and spec.rule is not None, name
        assert spec.rule.refuse(DEFAULTS[name], ExperimentConfig()) is None, name


def test_the_part_tables_are_the_parts():
    assert FAMILY_FIELDS == ("channels", "image", "classes", "d_model", "heads", "seq", "depth",
                             "ff", "fast_path", "cell", "features", "hidden")  # fmt: skip
    assert USER_MODEL_FIELDS == ("model_args", "input_shape", "input_kind", "vocab",
                                 "input_image", "layer_depth")  # fmt: skip
    assert DATA_FIELDS == ("data", "checkpoint", "epochs")
    assert TRAINING_FIELDS == ("mode", "steps", "lr", "optimizer", "scaler")
    assert part_fields(ExperimentConfig, "interventions") == ("keep_float32",)


def test_every_family_param_is_a_family_field_and_every_family_field_a_param():
    params = {p.name for fam in FAMILIES.values() for p in fam.params}
    assert params == set(FAMILY_FIELDS)
    for fam in FAMILIES.values():
        for param in fam.params:
            assert SPECS[param.name].part == "family", (fam.name, param.name)


def test_a_family_param_takes_its_type_and_rule_from_its_field():
    cnn = {p.name: p for p in FAMILIES["cnn"].params}
    rnn = {p.name: p for p in FAMILIES["rnn"].params}
    transformer = {p.name: p for p in FAMILIES["transformer"].params}
    assert (cnn["channels"].kind, cnn["image"].kind, cnn["image"].minimum) == ("ints", "int", 2)
    assert (rnn["cell"].kind, rnn["cell"].choices) == ("choice", ("lstm", "gru"))
    assert transformer["fast_path"].kind == "bool"
    assert rnn["seq"].help == "time steps per sequence (default 32)"  # the family's meaning
    assert cnn["image"].help == "square image side in pixels (default 32)"  # the field's


def test_every_flagged_field_has_its_flag():
    run = build_parser()._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr]
    flags = {option: action.dest for action in run._actions for option in action.option_strings}
    for name, spec in SPECS.items():
        if spec.flag is None:
            assert name in ("memory_budget_mb", "input_image")  # no flag today
            continue
        flag = spec.flag or "--" + name.replace("_", "-")
        if DEFAULTS[name] is True:
            flag = "--no-" + name.replace("_", "-")
        assert flags.get(flag) == name, flag


@pytest.mark.parametrize(
    ("rule", "value", "words"),
    [
        (whole(1, noun="an integer"), 0, "must be an integer ≥ 1 (got 0)"),
        (whole(1, noun="an integer"), True, "must be an integer ≥ 1 (got True)"),
        (whole(2, ceiling=9), 10, "must be a whole number in 2 … 9 (got 10)"),
        (whole(2, ceiling=9, nullable=True), None, None),
        (number(0, ceiling=1e6), float("nan"), "must be a number in 0 … 1e+06 (got nan)"),
        (number(0, 5, above=True, words="must be > 0"), 0, "must be > 0 (got 0)"),
        (number(0, 5, above=True), 5, None),
    ],
)
def test_the_rule_kinds_refuse_in_today_s_words(rule, value, words):
    assert rule.refuse(value, None) == words


def test_a_rule_s_schema_publishes_its_bounds_but_not_its_ceiling():
    assert whole(1, ceiling=1 << 20).bounds() == {"minimum": 1}
    assert whole(1, 50).bounds() == {"minimum": 1, "maximum": 50}
    assert number(0, 100.0, above=True).bounds() == {"exclusiveMinimum": 0, "maximum": 100.0}

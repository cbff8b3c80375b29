"""A family is one module plus one registry entry: a fake family registered here, at test time,
must show up wherever families are listed, with no edit anywhere else.

The fake ("ladder": `depth` Linear layers `hidden` wide, built from the config's existing
fields) is found by the config's `model` rule and schema, `run --help`, the window's model
selector, a run's summary title and report rows, and the reproduce script's family tables. A
consumer that went back to a list of its own would miss the fake, and its assertion here fails.
"""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QComboBox, QSpinBox

from autocast_explorer.cli import build_parser
from autocast_explorer.core.experiment.config import ConfigError, ExperimentConfig
from autocast_explorer.core.experiment.config_rules import built_in_models
from autocast_explorer.core.experiment.config_schema import config_properties
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.families import FAMILIES, register_family
from autocast_explorer.core.experiment.families.base import (
    Construction,
    Family,
    FamilyParam,
    Gemm,
)
from autocast_explorer.core.experiment.summary import format_summary
from autocast_explorer.core.reports.report import report_markdown
from autocast_explorer.core.reports.reproduce import family_sections
from autocast_explorer.gui.features.experiment.controls import ControlsPanel
from tests import fake_family_construct

BUILT_IN = ("mlp", "cnn", "transformer", "rnn")


class LadderFamily(Family):
    name = "ladder"
    title = "Ladder"
    params = (FamilyParam("hidden", "rung width"), FamilyParam("depth", "rungs"))
    uses = frozenset()

    def describe(self, config: ExperimentConfig) -> str:
        return f"Ladder {config.hidden}×{config.depth}"

    def gemms(self, config: ExperimentConfig) -> tuple[Gemm, ...]:
        return (Gemm("linear", config.batch, config.hidden, config.hidden, config.depth),)

    def parameter_count(self, config: ExperimentConfig) -> int:
        return config.depth * (config.hidden + 1) * config.hidden

    def activation_elements(self, config: ExperimentConfig) -> int:
        return config.batch * config.hidden * (2 * config.depth + 1)

    def input_elements(self, config: ExperimentConfig) -> int:
        return config.batch * config.hidden

    def construction(self) -> Construction:
        return Construction(fake_family_construct.ladder_model, fake_family_construct.ladder_input)


@pytest.fixture
def ladder():
    register_family(LadderFamily())
    yield FAMILIES["ladder"]
    del FAMILIES["ladder"]


LADDER = {"model": "ladder", "hidden": 8, "depth": 3, "batch": 2, "min_time": 0.01, "threads": 1}


def test_the_fake_is_registered_only_inside_the_fixture(ladder):
    assert built_in_models() == (*BUILT_IN, "ladder")


def test_a_family_s_parameters_must_be_family_fields():
    class Bad(LadderFamily):
        name = "bad"
        params = (FamilyParam("batch"),)

    with pytest.raises(ValueError, match="bad: batch is not a config field of the family part"):
        register_family(Bad())
    with pytest.raises(ValueError, match="a family needs a new name"):
        register_family(FAMILIES["mlp"])
    assert built_in_models() == BUILT_IN


def test_run_help_lists_the_fake(ladder, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert "a built-in family (mlp, cnn, transformer, rnn, ladder; default mlp" in help_text
    assert "flags of --model cnn, transformer, rnn and ladder (each family's own)" in help_text
    assert "--hidden HIDDEN rnn, ladder: hidden state width (default 64)" in help_text
    args = build_parser().parse_args(["run", "--model", "ladder", "--hidden", "8"])
    assert (args.model, args.hidden) == ("ladder", 8)


def test_the_config_and_its_schema_accept_the_fake(ladder):
    config = ExperimentConfig(**LADDER)
    assert not config.is_user_model and config.title == "Ladder 8×3"
    data = config.to_dict()
    assert (data["hidden"], data["depth"]) == (8, 3)
    assert "widths" not in data and "channels" not in data
    assert ExperimentConfig.from_dict(data) == config
    with pytest.raises(ConfigError, match=r"hidden: must be a whole number in 1 … 1048576 \(got 0"):
        ExperimentConfig(**{**LADDER, "hidden": 0})
    properties = config_properties()
    assert properties["model"]["anyOf"][0]["enum"] == [*BUILT_IN, "ladder"]
    assert properties["depth"]["description"].startswith("transformer, rnn, ladder: ")


def test_the_config_refuses_the_fake_once_it_is_gone():
    with pytest.raises(ConfigError, match=r"'ladder' is not a built-in model \(mlp, cnn, "):
        ExperimentConfig(**LADDER)


def test_the_window_offers_the_fake_with_its_inputs(ladder, qtbot):
    panel = ControlsPanel()
    qtbot.addWidget(panel)
    combo = panel.findChild(QComboBox, "modelCombo")
    assert [combo.itemData(i) for i in range(combo.count())] == [*BUILT_IN, "ladder", "user"]
    assert combo.itemText(4) == "Ladder (ladder)"
    combo.setCurrentIndex(4)
    panel.findChild(QSpinBox, "ladderHiddenSpin").setValue(8)
    panel.findChild(QSpinBox, "ladderDepthSpin").setValue(3)
    config = panel.config()
    assert (config.model, config.hidden, config.depth) == ("ladder", 8, 3)


def test_a_run_of_the_fake_is_titled_by_it_and_reproducible(ladder):
    result = run_experiment(ExperimentConfig(**LADDER))
    assert [layer.name for layer in result.layers] == ["fc1", "relu1", "fc2", "relu2", "fc3"]
    assert "Ladder 8×3" in format_summary(result).splitlines()[0]
    report = report_markdown(result)  # the family's title, then its parameters
    assert "| model | Ladder |\n| hidden | 8 |\n| depth | 3 |" in report
    sections = "\n".join(family_sections())
    assert "    'ladder': ladder_model,\n" in sections
    assert "    'ladder': ladder_input,\n" in sections
    assert "def ladder_model(config" in sections

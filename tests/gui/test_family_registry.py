"""A family is one module plus one registry entry: a fake family registered here, at test time,
must show up wherever families are listed, with no edit anywhere else.

The fake ("ladder": `depth` Linear layers `hidden` wide, built from the config's existing
fields) is found by the config's `model` rule and schema, `run --help`, the window's model
selector, a run's summary title and report rows, and the reproduce script's family tables. It
takes rows of real data, so it is also found by the `data` rule, the fitting of a config to
data and the window's note under the data selector; its logits are `hidden` wide, so training
counts that many classes; its FLOP formula is its own; it sweeps its `depth` (and `hidden`, as
the RNN does), so `sweep --param` and its help, the sweep and preset schemas, the default
values and the Sweeps tab's choices offer it. A consumer that went back to a list of its own
would miss the fake, and its assertion here fails.
"""

from __future__ import annotations

import numpy as np
import pytest
from jsonschema import Draft202012Validator
from PySide6.QtWidgets import QComboBox, QLabel, QSpinBox

from autocast_explorer.cli import build_parser
from autocast_explorer.core.data.dataset import dataset_from_arrays
from autocast_explorer.core.experiment.config import ConfigError, ExperimentConfig
from autocast_explorer.core.experiment.config_rules import built_in_models
from autocast_explorer.core.experiment.config_schema import config_properties
from autocast_explorer.core.experiment.data_fit import fit_config, input_shape
from autocast_explorer.core.experiment.engine import run_experiment, training_step_flops
from autocast_explorer.core.experiment.families import FAMILIES, register_family
from autocast_explorer.core.experiment.families.base import (
    ROWS_OF_FEATURES,
    Construction,
    Family,
    FamilyParam,
    Gemm,
    SweptSize,
)
from autocast_explorer.core.experiment.families.user.spec import parse_spec
from autocast_explorer.core.experiment.summary import format_summary
from autocast_explorer.core.experiment.train_task import CROSS_ENTROPY, LossPlan, loss_plan
from autocast_explorer.core.learning.presets import preset_schema
from autocast_explorer.core.reports.report import report_markdown
from autocast_explorer.core.reports.reproduce import family_sections
from autocast_explorer.core.sweeps.result import SweepResult, sweep_schema
from autocast_explorer.core.sweeps.roofline import flops_formula
from autocast_explorer.core.sweeps.runner import run_sweep
from autocast_explorer.core.sweeps.spec import default_values, sweep_params
from autocast_explorer.gui.features.experiment.controls import ControlsPanel
from autocast_explorer.gui.features.sweeps.inputs import param_choices
from tests import fake_family_construct

BUILT_IN = ("mlp", "cnn", "transformer", "rnn")


class LadderFamily(Family):
    name = "ladder"
    title = "Ladder"
    params = (FamilyParam("hidden", "rung width"), FamilyParam("depth", "rungs"))
    uses = frozenset()
    rows = ROWS_OF_FEATURES
    data_sets = "rung width"
    flops_formula = "FLOPs = 2·B·hidden² per rung"
    #: Its own size, and one it shares with the RNN (the same definition).
    sweeps = (
        SweptSize("hidden", "hidden width", (16, 1024, 7)),
        SweptSize("depth", "rungs", (1, 8, 4)),
    )

    def fit_data(self, config: ExperimentConfig, dataset) -> ExperimentConfig:
        """A row is as wide as a rung; the labels must fit in a rung's outputs."""
        return config.replace(hidden=max(dataset.features, dataset.classes))

    def classes(self, config: ExperimentConfig) -> int:
        return config.hidden

    def training_step_flops(self, config: ExperimentConfig) -> int:
        return 5 * self.flops(config)  # not the base's 3 forwards: the engine must ask

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


def test_a_family_that_takes_rows_must_say_how_to_fit_them():
    class NoFit(LadderFamily):
        name = "nofit"
        fit_data = Family.fit_data

    class Odd(LadderFamily):
        name = "odd"
        rows = "pixels"

    with pytest.raises(ValueError, match="nofit: a family that takes rows needs fit_data"):
        register_family(NoFit())
    with pytest.raises(ValueError, match="odd: rows 'pixels' are neither features nor images"):
        register_family(Odd())
    assert built_in_models() == BUILT_IN


def test_a_size_two_families_sweep_is_defined_alike():
    class Unlike(LadderFamily):
        name = "unlike"
        sweeps = (SweptSize("hidden", "rung width", (2, 64, 6)),)

    with pytest.raises(ValueError, match="unlike: sweeps hidden unlike the families before it"):
        register_family(Unlike())
    assert built_in_models() == BUILT_IN


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


def test_the_fake_takes_real_data_as_it_says(ladder):
    assert ExperimentConfig(**LADDER, data="digits").data == "digits"
    with pytest.raises(ConfigError, match=r"real data needs model mlp, cnn, ladder or your own"):
        ExperimentConfig(model="rnn", data="digits")
    rows = dataset_from_arrays("d", {"x": np.zeros((6, 1, 4, 5)), "y": np.arange(6) % 3})
    fitted = fit_config(ExperimentConfig(**LADDER, data="digits"), rows)
    assert (fitted.hidden, fitted.depth) == (20, 3)  # 1×4×5 features a row, flattened
    assert input_shape(fitted, rows) == (20,)


def test_the_spec_parser_names_the_fake_among_the_families(ladder):
    with pytest.raises(ConfigError, match=r"\(mlp, cnn, transformer, rnn, ladder\) nor a spec"):
        parse_spec("resnet")


def test_training_counts_the_fake_s_classes_and_flops(ladder):
    config = ExperimentConfig(**{**LADDER, "mode": "train", "steps": 2})
    assert loss_plan(config) == LossPlan(CROSS_ENTROPY, 8)
    assert training_step_flops(config) == 5 * 2 * 2 * 8 * 8 * 3
    assert flops_formula(config) == "FLOPs = 2·B·hidden² per rung"
    result = run_experiment(config)  # 10 classes drawn for 8 logits would fail cross-entropy
    assert result.train is not None and len(result.train.loss["plain"]) == 2
    assert result.flops == training_step_flops(config)


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
    note = panel.findChild(QLabel, "dataNote").text()
    assert "(MLP: first width; CNN: channels[0] and image side; Ladder: rung width)" in note


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


def test_sweep_offers_the_fake_s_sizes(ladder, capsys):
    sizes = ("batch", "width", "channels", "image", "seq", "d_model", "hidden", "depth")
    assert sweep_params() == sizes
    assert default_values("depth") == (1, 2, 4, 8)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["sweep", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "d_model (transformer), hidden (rnn, ladder), depth (ladder); batch,width" in help_text
    assert "hidden 16:1024:7, depth 1:8:4 (batch: the powers of two)" in help_text
    args = build_parser().parse_args(["sweep", "--model", "ladder", "--param", "depth"])
    assert args.param == "depth"
    preset_enum = preset_schema()["properties"]["sweep"]["anyOf"][1]["properties"]["param"]
    assert preset_enum["enum"][-1] == "depth"


def test_a_sweep_of_the_fake_s_depth_is_written_and_read(ladder):
    config = ExperimentConfig(**{**LADDER, "min_time": 0.01})
    result = run_sweep(config, "depth", (1, 2), probe_onednn=False, adaptive=False)
    assert [p.config.depth for p in result.points] == [1, 2]
    data = result.to_dict()
    assert data["param"] == "depth"
    assert list(Draft202012Validator(sweep_schema()).iter_errors(data)) == []
    assert SweepResult.from_dict(data).spec.param == "depth"


def test_the_sweeps_tab_offers_the_fake_s_sizes(ladder):
    choices = dict(param_choices())
    assert choices["depth"] == "rungs (Ladder)"
    assert choices["hidden"] == "hidden width (RNN, Ladder)"
    assert list(choices)[:3] == ["batch", "width", "grid"]

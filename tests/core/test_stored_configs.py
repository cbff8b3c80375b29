"""Every config a past version of the explorer wrote reads today, with the values it carries.

tests/data/configs/DATE-COMMIT.json holds, for each version that changed the config's fields
(`tools/stored_configs.py` ran that version's own code): configs as its to_dict wrote them (what
the window's settings, a preset and a result store), a built-in preset as it saved presets, and
the `config` section of the result document a tiny run of its command line wrote. Over the
history fields were only added (the field list of every commit that touched the config), never
renamed or removed: an old file reads with today's defaults for the fields it predates. A key
that stops being a field fails here until the reader upgrades it.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.result import ConfigField
from autocast_explorer.core.learning.presets import parse_preset

STORED = Path(__file__).resolve().parents[1] / "data" / "configs"
FILES = sorted(STORED.glob("*.json"))
DOCUMENTS = {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in FILES}
DEFAULTS = {f.name: f.default for f in dataclasses.fields(ExperimentConfig)}
CONFIGS = [
    pytest.param(data, id=f"{stem}-{name}")
    for stem, document in DOCUMENTS.items()
    for name, data in document["configs"].items()
]
RESULTS = [pytest.param(d["result"], id=s) for s, d in DOCUMENTS.items() if "result" in d]
PRESETS = [pytest.param(d["preset"], id=s) for s, d in DOCUMENTS.items() if "preset" in d]


def json_form(name: str, value: Any) -> Any:
    """A config value as its JSON (tuples are lists; your model's arguments an object)."""
    if name == "model_args":
        return {key: json_form("", v) for key, v in value}
    return [json_form("", v) for v in value] if isinstance(value, tuple) else value


def carries(config: ExperimentConfig, written: dict[str, Any]) -> None:
    """`config` holds every value `written` names, and today's default for every other field."""
    unknown = set(written) - set(DEFAULTS)
    assert not unknown, f"{sorted(unknown)} are no fields today: the reader must upgrade them"
    for name, default in DEFAULTS.items():
        expected = written.get(name, json_form(name, default))
        assert json_form(name, getattr(config, name)) == expected, name


def test_a_file_for_each_version_of_the_config():
    """The field lists as the versions grew them: 15 fields, then training, the families, your
    own model, routes, real data, the time limit, the layers kept in float32."""
    named = [set().union(*d["configs"].values()) for d in DOCUMENTS.values()]
    assert [stem[-7:] for stem in DOCUMENTS] == [
        "222013d", "6e47408", "5247515", "7152d46", "3ff1169", "7b86294", "7de03e4",
        "b726b40", "9095d0c", "efe4e1e",
    ]  # fmt: skip
    assert [len(fields) for fields in named] == [15, 15, 33, 20, 39, 43, 40, 44, 44, 45]
    assert named[-1] == set(DEFAULTS)  # together, the last version's configs name every field


@pytest.mark.parametrize("written", CONFIGS)
def test_every_stored_config_reads_with_its_values(written):
    carries(ExperimentConfig.from_dict(written), written)


@pytest.mark.parametrize("section", RESULTS)
def test_every_stored_result_config_reads_through_the_result_reader(section):
    assert section["schema"] == "autocast-explorer/result/1"
    config = TypeAdapter(ConfigField).validate_python(section["config"])
    carries(config, section["config"])


@pytest.mark.parametrize("document", PRESETS)
def test_every_stored_preset_reads_through_the_preset_reader(document):
    preset = parse_preset(json.dumps(document), source="stored preset")
    assert preset.name == document["name"]
    carries(preset.config, document["config"])


def test_the_first_version_s_files_upgrade_to_today_s_defaults():
    first = DOCUMENTS["2026-11-29-222013d"]
    custom = ExperimentConfig.from_dict(first["configs"]["custom"])
    assert (custom.widths, custom.batch, custom.seed, custom.dtype) == (
        (64, 32, 10),
        16,
        3,
        "float16",
    )
    assert (custom.threads, custom.memory_budget_mb, custom.min_time, custom.allow_slow) == (
        1,
        512.0,
        0.25,
        True,
    )
    # Fields added since: the values that reproduce what that version measured.
    assert (custom.model, custom.mode, custom.routes, custom.data) == (
        "mlp",
        "infer",
        ("eager",),
        "synthetic",
    )
    assert (custom.max_time, custom.input_kind, custom.model_args) == (None, "auto", ())
    run = TypeAdapter(ConfigField).validate_python(first["result"]["config"])
    assert (run.widths, run.batch, run.seed, run.min_time, run.threads) == (
        (16, 8, 4),
        4,
        2,
        0.01,
        1,
    )


def test_each_later_version_s_new_fields_keep_their_values():
    def config(stem: str, name: str) -> ExperimentConfig:
        return ExperimentConfig.from_dict(DOCUMENTS[stem]["configs"][name])

    train = config("2026-12-01-7152d46", "train")
    assert (train.mode, train.steps, train.lr, train.optimizer, train.scaler) == (
        "train",
        20,
        0.01,
        "adamw",
        False,
    )
    cnn = config("2026-12-01-5247515", "cnn")
    assert (cnn.model, cnn.channels, cnn.image, cnn.classes, cnn.batch) == (
        "cnn",
        (1, 8, 16),
        16,
        4,
        8,
    )
    user = config("2026-12-02-3ff1169", "user")
    assert user.model_args == (("hidden_size", 32), ("num_hidden_layers", 1))
    assert (user.input_kind, user.vocab, user.seq, user.layer_depth) == ("tokens", 100, 8, 2)
    assert config("2026-12-02-7de03e4", "custom").routes == ("eager", "implicit")
    digits = config("2026-12-02-7b86294", "digits")
    assert (digits.data, digits.epochs, digits.channels, digits.checkpoint) == (
        "digits",
        3,
        (1, 8),
        "",
    )
    assert config("2026-12-02-b726b40", "custom").max_time == 2.0
    run = TypeAdapter(ConfigField).validate_python(
        DOCUMENTS["2026-12-02-b726b40"]["result"]["config"]
    )
    assert (run.model, run.d_model, run.heads, run.max_time) == ("transformer", 8, 2, 0.05)


def test_a_config_stored_before_keep_float32_reads_as_nothing_kept():
    before = DOCUMENTS["2026-12-04-9095d0c"]
    for written in (*before["configs"].values(), before["result"]["config"]):
        assert "keep_float32" not in written
        assert ExperimentConfig.from_dict(written).keep_float32 == ()
    assert TypeAdapter(ConfigField).validate_python(before["result"]["config"]).keep_float32 == ()
    kept = DOCUMENTS["2026-12-04-efe4e1e"]
    assert ExperimentConfig.from_dict(kept["configs"]["custom"]).keep_float32 == ("fc1", "Linear")
    assert kept["result"]["config"]["keep_float32"] == ["fc2"]

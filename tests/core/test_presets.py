"""Built-in presets load and validate; broken preset files give one clear PresetError each."""

import json
import re
import subprocess
import sys

import pytest

from autocast_explorer.core.documents.resources import RESOURCES_ENV, presets_dir, resources_dir
from autocast_explorer.core.experiment.config import (
    ConfigError,
    ExperimentConfig,
    flops_per_forward,
)
from autocast_explorer.core.learning.presets import (
    MAX_PRESET_BYTES,
    SCHEMA,
    PresetError,
    SweepSpec,
    builtin_presets,
    find_preset,
    load_preset,
    make_preset,
    parse_preset,
    preset_filename,
    save_preset,
    scan_presets,
)


@pytest.fixture(scope="module")
def presets():
    return builtin_presets()


def test_builtin_presets_cover_the_issue_and_list_tutorial_first(presets):
    ids = [p.id for p in presets]
    assert ids[0] == "tutorial"
    assert {"tutorial", "large-mlp", "batch-sweep", "softmax-head", "float16"} <= set(ids)
    rest = [p.name.casefold() for p in presets[1:]]
    assert rest == sorted(rest)
    assert len(ids) == len(list(presets_dir().glob("*.json")))
    for preset in presets:
        assert preset.builtin is True
        assert preset.path is not None and preset.path.parent == presets_dir()
        assert isinstance(preset.config, ExperimentConfig)
        sentences = re.findall(r"[.!?](?:\s|$)", preset.description)
        assert 1 <= len(sentences) <= 2, preset.description


def test_each_builtin_preset_holds_what_its_name_promises(presets):
    by_id = {p.id: p for p in presets}
    tutorial = by_id["tutorial"]
    assert "tutorial" in tutorial.name
    assert tutorial.config == ExperimentConfig()
    assert tutorial.sweep is None

    large = by_id["large-mlp"].config
    assert max(large.widths) == 1024 and large.batch == 512
    training = by_id["training"].config
    assert training.mode == "train" and training.widths == (256, 1024, 1024, 10)
    tutorial_flops = flops_per_forward(tutorial.config.widths, tutorial.config.batch)
    assert flops_per_forward(large.widths, large.batch) > 50 * tutorial_flops

    sweep = by_id["batch-sweep"].sweep
    assert sweep is not None and sweep.param == "batch"
    assert len(sweep.values) >= 4 and all(isinstance(v, int) and v > 0 for v in sweep.values)
    assert by_id["softmax-head"].config.head == "softmax"
    assert by_id["float16"].config.dtype == "float16"


def test_builtin_presets_pass_the_memory_and_time_guards(presets):
    """Even where every op runs at only 1 GFLOP/s (steady_rate.RATE), on any load."""
    from autocast_explorer.core.experiment import guards
    from tests.steady_rate import steady_rates

    with steady_rates():
        for preset in presets:
            guards.check(preset.config)
            if preset.sweep is not None and preset.sweep.param == "batch":
                for value in preset.sweep.values:
                    guards.check(preset.config.replace(batch=value))


def test_builtin_presets_round_trip_through_json(presets):
    for preset in presets:
        again = parse_preset(preset.to_json(), "copy", preset.id, builtin=True)
        assert (again.name, again.description, again.config, again.sweep) == (
            preset.name,
            preset.description,
            preset.config,
            preset.sweep,
        )


def test_find_preset_by_id_or_name(presets):
    assert find_preset(presets, "Tutorial Example").id == "tutorial"
    assert find_preset(presets, "large-mlp").name == "large MLP"
    with pytest.raises(KeyError, match="choose one of: tutorial"):
        find_preset(presets, "nope")


GOOD = {
    "schema": SCHEMA,
    "name": "mine",
    "description": "A preset.",
    "config": {"widths": [8, 4], "batch": 2},
}


def _doc(**changes):
    data = json.loads(json.dumps(GOOD))
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return json.dumps(data)


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("", "file is empty"),
        ("   \n", "file is empty"),
        (_doc()[:-7], "not valid JSON (line 1, column"),
        ("[1, 2, 3]", "expected a JSON object, got a list"),
        ('"just text"', "expected a JSON object, got a string"),
        (_doc(schema="autocast-explorer/preset/9"), "schema 'autocast-explorer/preset/9' is not"),
        (_doc(schema="autocast-explorer/result/1"), "this is a result file, not a preset"),
        (_doc(schema=None), "not an Autocast Explorer preset (no 'schema'"),
        (_doc(config={"widths": [8, 4], "batch": 0}), "config.batch: must be an integer ≥ 1"),
        (_doc(config={"widths": [8, 4], "dtype": "int8"}), "config.dtype: must be one of"),
        (_doc(config={"widht": [8, 4]}), "config: unknown field 'widht'"),
        (_doc(config=[8, 4]), "config: expected a JSON object, got a list"),
        (_doc(config=None), "config: missing"),
        (_doc(name=None), "name: missing or not a non-empty string"),
        (_doc(name="x" * 200), "name: longer than 80 characters"),
        (_doc(extra=1), "unknown key 'extra'"),
        (
            _doc(config={"widths": [8, 4], "atol": 1}).replace("1}", "NaN}"),
            "NaN is not a number JSON allows",
        ),
        (
            _doc(sweep={"param": "depth", "values": [1, 2]}),
            "sweep.param: must be one of batch, width",
        ),
        (
            _doc(sweep={"param": "batch", "values": [1, "8"]}),
            "sweep.values: '8' must be a whole number",
        ),
        (
            _doc(sweep={"param": "batch", "values": [4, 4]}),
            "sweep.values: needs at least 2 distinct values",
        ),
        (_doc(sweep={"param": "batch", "values": [4]}), "sweep.values: needs at least 2 distinct"),
        (_doc(sweep={"param": "batch", "values": 4}), "sweep.values: expected a list"),
        ("[" * 50_000, "nested too deeply"),
        (" " * (MAX_PRESET_BYTES + 1) + "{}", "file is larger than 64 KB"),
    ],
)
def test_corrupt_preset_files_name_the_file_and_the_problem(tmp_path, content, fragment):
    path = tmp_path / "broken.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(PresetError) as info:
        load_preset(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    assert fragment in message
    assert "\n" not in message
    assert info.value.source == str(path)


def test_binary_missing_and_folder_paths_are_clear_errors(tmp_path):
    binary = tmp_path / "photo.json"
    binary.write_bytes(b"\xff\xd8\xff\xe0 not json")
    with pytest.raises(PresetError, match="not a text file"):
        load_preset(binary)
    with pytest.raises(PresetError, match="no such file"):
        load_preset(tmp_path / "missing.json")
    (tmp_path / "folder.json").mkdir()
    with pytest.raises(PresetError, match="is a folder, not a file"):
        load_preset(tmp_path / "folder.json")


def test_scan_skips_bad_files_and_reports_each(tmp_path):
    (tmp_path / "good.json").write_text(_doc())
    (tmp_path / "empty.json").write_text("")
    (tmp_path / "foreign.json").write_text('{"hello": 1}')
    (tmp_path / "notes.txt").write_text("not a preset")
    presets, errors = scan_presets(tmp_path)
    assert [p.id for p in presets] == ["good"]
    assert sorted(e.source.rsplit("/", 1)[1] for e in errors) == ["empty.json", "foreign.json"]
    assert scan_presets(tmp_path / "nowhere") == ([], [])


def test_a_broken_builtin_preset_is_reported_not_skipped(tmp_path, monkeypatch):
    (tmp_path / "presets").mkdir()
    (tmp_path / "presets" / "tutorial.json").write_text(_doc(config={"batch": -1}))
    monkeypatch.setenv(RESOURCES_ENV, str(tmp_path))
    assert resources_dir() == tmp_path
    with pytest.raises(PresetError, match=r"tutorial\.json: config\.batch"):
        builtin_presets()
    monkeypatch.setenv(RESOURCES_ENV, str(tmp_path / "missing"))
    with pytest.raises(PresetError, match="built-in presets folder not found"):
        builtin_presets()


def test_save_then_load_round_trips_atomically(tmp_path):
    config = ExperimentConfig(widths=(64, 32, 10), batch=16, head="log_softmax", seed=3)
    preset = make_preset("My sweep: batch!", "Mine.", config, SweepSpec("batch", (1, 4, 16)))
    path = tmp_path / "user" / preset_filename(preset.name)
    assert path.name == "my-sweep-batch.json"
    save_preset(preset, path)
    loaded = load_preset(path)
    assert (loaded.name, loaded.config, loaded.sweep) == (preset.name, config, preset.sweep)
    assert json.loads(path.read_text())["schema"] == SCHEMA
    assert [p.name for p in path.parent.iterdir()] == ["my-sweep-batch.json"]


def test_user_preset_names_never_escape_the_folder():
    assert preset_filename("../../etc/passwd") == "etc-passwd.json"
    assert preset_filename("***").startswith("preset-")  # no letters: a hash of the name


def test_invalid_user_presets_are_refused_before_saving():
    with pytest.raises(PresetError, match="name: missing"):
        make_preset("  ", "x", ExperimentConfig())
    with pytest.raises(ConfigError, match="param: must be one of batch, width"):
        SweepSpec("depth", (1, 2))


def test_cli_resources_dir_is_the_core_one():
    from autocast_explorer.cli import resources_dir as cli_resources_dir

    assert cli_resources_dir() == resources_dir()
    assert (resources_dir() / "presets" / "tutorial.json").is_file()


@pytest.mark.process
def test_presets_and_lessons_import_without_torch():
    code = (
        "import sys\n"
        "import autocast_explorer.core.learning.presets as p\n"
        "import autocast_explorer.core.learning.lessons as l\n"
        "p.builtin_presets(); print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

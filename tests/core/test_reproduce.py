"""reproduce.py is built from the explorer's own code: one definition, pasted, lint-clean."""

import importlib.util
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.families import FAMILIES
from autocast_explorer.core.experiment.families.base import Construction, Family
from autocast_explorer.core.reports import reproduce
from autocast_explorer.core.reports.reproduce import PASTED, reproduce_script
from tests.edits import edited

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def result():
    return run_experiment(ExperimentConfig(widths=(6, 4, 3), batch=2, min_time=0.01))


def _module(path, monkeypatch):
    """The module in `path`, in sys.modules for the test only (inspect finds its source)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, path.stem, module)
    spec.loader.exec_module(module)
    return module


def test_the_script_holds_each_familys_construction_exactly_as_the_explorer_runs_it(result):
    script = reproduce_script(result)
    for name, fam in FAMILIES.items():
        construction = fam.construction()
        for builder in (construction.model, construction.input):
            assert inspect.getsource(builder) in script
        assert f"    {name!r}: {construction.model.__name__},\n" in script
    for item in PASTED:
        if callable(item):
            assert inspect.getsource(item) in script


def test_a_registered_family_contributes_its_construction_and_nothing_else_changes(
    result, tmp_path, monkeypatch
):
    """A family added later is one registration: its construction module (and what it imports
    from the explorer) lands in the script, and build() finds it by name."""
    (tmp_path / "toy_construct.py").write_text(
        '"""A toy family."""\n\n'
        "from collections import OrderedDict\n\n"
        "import torch\n\n"
        "from autocast_explorer.core.experiment.families.construct.common import (\n"
        "    draw_input,\n    with_head,\n)\n\n\n"
        "def toy_model(config):\n"
        "    torch.manual_seed(config['seed'])\n"
        "    return with_head(config, OrderedDict(toy=torch.nn.Linear(3, 2)))\n\n\n"
        "def toy_input(config):\n"
        "    return draw_input(config, (config['batch'], 3))\n"
    )
    toy_construct = _module(tmp_path / "toy_construct.py", monkeypatch)

    class ToyFamily(Family):
        name = "toy"

        def construction(self) -> Construction:
            return Construction(toy_construct.toy_model, toy_construct.toy_input)

    before = reproduce_script(result)
    monkeypatch.setitem(FAMILIES, "toy", ToyFamily())
    after = reproduce_script(result)
    assert inspect.getsource(toy_construct.toy_model) in after
    assert inspect.getsource(toy_construct.toy_model) not in before
    assert "    'toy': toy_model,\n" in after and "    'toy': toy_input,\n" in after
    assert after.count("def with_head(") == 1  # a shared dependency is pasted once
    assert _without_toy(after) == before


def _without_toy(script):
    start = script.index("\n\n\n# ---- from toy_construct ----")
    script = script[:start] + script[script.index("\n\n\nFAMILY_MODELS") :]
    return "".join(line for line in script.splitlines(True) if "'toy': toy_" not in line)


def test_a_module_with_an_import_below_its_definitions_is_refused(tmp_path, monkeypatch):
    (tmp_path / "late_import.py").write_text("X = 1\nimport math\n")
    late_import = _module(tmp_path / "late_import.py", monkeypatch)

    with pytest.raises(ValueError, match="late_import: an import after its first definition"):
        reproduce._definitions(late_import)


SCRIPTS = {
    "mlp": ExperimentConfig(widths=(6, 4, 3), batch=2, min_time=0.01),
    "cnn": ExperimentConfig(model="cnn", channels=(3, 4), image=4, batch=2, min_time=0.01),
    "transformer": ExperimentConfig(
        model="transformer", d_model=8, heads=2, seq=3, depth=1, ff=8, batch=2, min_time=0.01
    ),
    "rnn": ExperimentConfig(
        model="rnn", features=4, hidden=4, seq=3, depth=1, batch=2, min_time=0.01
    ),
    "train": ExperimentConfig(widths=(6, 4, 3), batch=4, mode="train", steps=2, min_time=0.01),
}


@pytest.fixture(scope="module")
def scripts():
    return {name: reproduce_script(run_experiment(c)) for name, c in SCRIPTS.items()}


@pytest.mark.process
def test_every_script_compiles_and_passes_the_projects_ruff_check(scripts, tmp_path):
    for name, script in scripts.items():
        compile(script, f"{name}/reproduce.py", "exec")
        path = tmp_path / f"{name}.py"
        path.write_text(script)
    config = ["--no-cache", "--config", str(ROOT / "pyproject.toml")]
    files = sorted(str(p) for p in tmp_path.glob("*.py"))
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", *config, *files],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_scripts_model_line_is_the_explorers_description(scripts):
    line = next(s for s in scripts["cnn"].splitlines() if s.startswith("MODEL_LINE = "))
    assert line == "MODEL_LINE = 'CNN 3→4 · image 4 · 10 classes'"


def test_a_user_models_script_builds_through_the_explorers_loader(result):
    user = edited(result, config=result.config.replace(model="my_model.py:build"))
    script = reproduce_script(user)
    assert "from autocast_explorer.core.experiment.model import build as build_config" in script
    assert "MODEL_LINE = 'my_model.py:build'" in script

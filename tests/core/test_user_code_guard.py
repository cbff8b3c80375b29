"""The one guard around the user's code (families/user/guard.py): what it turns into one line,
and what it lets through as it came."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families.user.errors import UserModelError
from autocast_explorer.core.experiment.families.user.guard import UserCode, user_paths, user_phase
from autocast_explorer.core.experiment.out_of_memory import OutOfMemory
from autocast_explorer.core.runtime.errors import ConfigError
from autocast_explorer.core.runtime.progress import Cancelled

CODE = """\
class Boom(BaseException):
    pass


def fail(error):
    raise error
"""


@pytest.fixture
def user_file(tmp_path: Path):
    """A module of the user's, imported from its file: its `fail(error)` raises `error`."""
    path = tmp_path / "mine.py"
    path.write_text(CODE)
    spec = importlib.util.spec_from_file_location("guard_test_mine", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path, module


@pytest.mark.parametrize(
    ("make", "named"),
    [
        (lambda m: RuntimeError("bad\nsecond line"), "RuntimeError: bad second line"),
        (lambda m: m.Boom("boom"), "Boom: boom"),
        (lambda m: GeneratorExit("closing"), "GeneratorExit: closing"),
        (lambda m: SystemExit(3), "called sys.exit(3)"),
        (lambda m: SystemExit(), "called sys.exit()"),
    ],
)
def test_what_the_users_code_raises_is_one_line_naming_spec_phase_and_frame(user_file, make, named):
    path, module = user_file
    spec = f"{path}:build"
    with pytest.raises(UserModelError) as caught, UserCode(spec, "timing the forwards"):
        module.fail(make(module))
    error = caught.value
    assert (error.field, error.spec) == ("model", spec)
    assert str(error) == f"model: {spec}: timing the forwards: mine.py:6: {named}"
    assert error.__suppress_context__  # no chained traceback behind the line


@pytest.mark.parametrize(
    "error",
    [
        KeyboardInterrupt(),
        Cancelled(),
        ConfigError("model", "an inner guard's line"),
        MemoryError(),
        OutOfMemory("out of memory", None, 0, 0),
        RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 8 bytes"),
    ],
    ids=type,
)
def test_what_ends_the_program_or_is_its_own_outcome_passes_as_it_came(user_file, error):
    path, module = user_file
    with pytest.raises(type(error)) as caught, UserCode(f"{path}:build", "training"):
        module.fail(error)
    assert caught.value is error


def test_a_built_in_familys_code_is_not_guarded(user_file):
    _path, module = user_file
    config = ExperimentConfig()  # the MLP: a failure is this program's bug, with its traceback
    with pytest.raises(RuntimeError, match="ours") as caught, user_phase(config, "timing"):
        module.fail(RuntimeError("ours"))
    assert not isinstance(caught.value, ConfigError)


def test_the_users_paths_of_each_kind_of_spec(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert user_paths("models/mine.py:build") == (str(tmp_path / "models" / "mine.py"),)
    assert user_paths("not_imported_yet.module:build") == (str(tmp_path),)
    here = Path(pytest.__file__).parent
    assert user_paths("pytest:main") == (str(here),)
    assert user_paths("hf:bert") == ()

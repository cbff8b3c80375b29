"""What a user model's spec and arguments become: the factory a file's spec names, list
arguments, and arguments that ask for trained weights (refused by every library spec, handed
to a factory of the user's as given)."""

from __future__ import annotations

from pathlib import Path

import pytest

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.families.user.errors import UserModelError
from autocast_explorer.core.experiment.families.user.probe import probe
from autocast_explorer.core.experiment.families.user.spec import file_factory
from tests.core.test_user_models import TINY_BERT


def test_a_file_s_factory_is_read_off_the_file_without_running_it(tmp_path: Path) -> None:
    def factory(source: str, typed: str = "") -> str:
        path = tmp_path / "model.py"
        path.write_text(source)
        return file_factory(str(path), typed)

    never_run = "raise SystemExit('imported')\n"
    assert factory(never_run + "def _helper(): ...\ndef make(): ...\ndef build(): ...\n") == "build"
    assert factory(never_run + "def _helper(): ...\ndef make(): ...\ndef other(): ...\n") == "make"
    assert factory("def make(): ...\ndef mine(): ...\n", typed="mine") == "mine"
    assert factory("def build(): ...\n", typed="gone") == "build"
    assert factory("class Net: ...\nx = 1\n") == "build"  # no function: the documented name
    assert factory("def broken(:\n") == "build"  # not Python: nothing to read
    assert file_factory(str(tmp_path / "missing.py"), "mine") == "mine"


def test_a_list_argument_reaches_the_factory_as_a_list(tmp_path: Path) -> None:
    path = tmp_path / "sized.py"
    path.write_text(
        "import torch\n\n\ndef build(sizes=(2, 5)):\n"
        "    assert isinstance(sizes, list), type(sizes)\n"
        "    return torch.nn.Linear(sizes[0], sizes[-1]), torch.randn(1, sizes[0])\n"
    )
    config = ExperimentConfig(model=f"{path}:build", model_args=["sizes=[2,3]"], batch=1)
    assert config.model_args == (("sizes", (2, 3)),)  # the frozen config holds a tuple
    assert probe(config).output_shape == (1, 3)


def test_a_factory_gets_a_weights_argument_as_given(tmp_path: Path) -> None:
    """A factory is the user's code: what it does with `pretrained` is its own business."""
    path = tmp_path / "asks.py"
    path.write_text(
        "import torch\n\n\ndef build(pretrained=False):\n"
        "    return torch.nn.Linear(2, 2 + pretrained), torch.randn(1, 2)\n"
    )
    config = ExperimentConfig(model=f"{path}:build", model_args={"pretrained": True}, batch=1)
    assert probe(config).output_shape == (1, 3)


def test_hf_refuses_a_weights_argument_as_torchvision_and_timm_do() -> None:
    # Asking for trained weights is refused by hf: as by torchvision: and timm: (an hf config
    # would keep it as a silent attribute and build random weights all the same).
    for key, value in (
        ("pretrained", True),
        ("weights", "DEFAULT"),
        ("use_pretrained_backbone", 1),
    ):
        config = ExperimentConfig(model="hf:bert", model_args={key: value, **TINY_BERT})
        with pytest.raises(UserModelError) as refused:
            probe(config)
        assert str(refused.value) == (
            f"model: hf:bert: --model-arg {key}=… would download weights; nothing is downloaded"
        )
    built = probe(ExperimentConfig(model="hf:bert", model_args={"pretrained": False, **TINY_BERT}))
    assert built.class_name == "BertModel"

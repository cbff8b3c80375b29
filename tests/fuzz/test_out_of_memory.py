"""Out of memory is its own outcome: plain, autocast, training, placements and sweeps all end
with exit 1 and one line putting what the allocator refused beside the guard's estimate; it is
never an autocast finding, never "bad input", never a traceback.

A fault-injecting layer raises exactly what torch's CPU allocator (or Python) raises, on the
side asked for, so no test really exhausts the machine's memory.
"""

from __future__ import annotations

import pytest
import torch

from autocast_explorer.cli import main
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.families import FAMILIES
from autocast_explorer.core.experiment.out_of_memory import (
    OutOfMemory,
    is_out_of_memory,
    refused_bytes,
)
from autocast_explorer.core.sweeps.runner import run_sweep
from autocast_explorer.gui.tasks.runner import describe_error

#: What torch 2.x's DefaultCPUAllocator says when malloc fails.
TORCH_OOM = (
    "[enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: can't allocate memory: "
    "you tried to allocate 1073741824 bytes. Error code 12 (Cannot allocate memory)"
)
FAULTS = {
    "torch": lambda: RuntimeError(TORCH_OOM),
    "python": lambda: MemoryError(),
}
SIDES = ("autocast", "plain", "both")


class RunsOutOfMemory(torch.nn.Module):
    """Raises the allocator's error on one side (autocast on or off) or on both."""

    def __init__(self, side: str, fault: str) -> None:
        super().__init__()
        self.side, self.fault = side, fault

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        under = torch.is_autocast_enabled("cpu")
        if self.side == "both" or (self.side == "autocast") == under:
            raise FAULTS[self.fault]()
        return x * 2


def _patch(monkeypatch: pytest.MonkeyPatch, side: str, fault: str = "torch") -> None:
    def build(config: ExperimentConfig) -> torch.nn.Module:
        torch.manual_seed(config.seed)
        model = torch.nn.Sequential()
        model.add_module("fc1", torch.nn.Linear(config.widths[0], 8))
        model.add_module("oom", RunsOutOfMemory(side, fault))
        model.add_module("fc2", torch.nn.Linear(8, config.widths[-1]))
        return model.eval()

    monkeypatch.setattr(FAMILIES["mlp"], "build_model", build)


SMALL = ["--widths", "16,8,4", "--batch", "4", "--min-time", "0.02", "--threads", "1"]


def _one_oom_line(capsys: pytest.CaptureFixture[str], fault: str) -> str:
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    line = lines[0]
    assert line.startswith("error: out of memory"), line
    assert "Traceback" not in err and "autocast" not in line.split(";")[0]
    assert "the memory guard estimated a peak of" in line
    if fault == "torch":
        assert "the allocator refused 1,024 MB" in line
    else:
        assert "memory ran out" in line
    return out


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("side", SIDES)
def test_run_out_of_memory_is_exit_1_not_a_finding(monkeypatch, capsys, tmp_path, side, fault):
    _patch(monkeypatch, side, fault)
    out_json = tmp_path / "r.json"
    code = main(["run", *SMALL, "--json", str(out_json)])
    assert code == 1
    _one_oom_line(capsys, fault)
    assert not out_json.exists()  # no result: nothing was measured to the end
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_placements_out_of_memory(monkeypatch, capsys, fault):
    _patch(monkeypatch, "autocast", fault)
    assert main(["run", *SMALL, "--placements"]) == 1
    _one_oom_line(capsys, fault)


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("side", ("autocast", "plain"))
def test_training_out_of_memory(monkeypatch, capsys, side, fault):
    _patch(monkeypatch, side, fault)
    assert main(["run", *SMALL, "--mode", "train", "--steps", "2"]) == 1
    _one_oom_line(capsys, fault)


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_sweep_out_of_memory_names_the_point(monkeypatch, capsys, fault):
    _patch(monkeypatch, "autocast", fault)
    assert main(["sweep", *SMALL, "--values", "2,4", "--no-onednn"]) == 1
    out = _one_oom_line(capsys, fault)
    assert "batch" in out and "speedup" in out and "×" not in out  # the header, no point row


def test_core_raises_out_of_memory_with_sizes(monkeypatch):
    _patch(monkeypatch, "autocast")
    config = ExperimentConfig(widths=(16, 8, 4), batch=4, min_time=0.02, threads=1)
    with pytest.raises(OutOfMemory) as caught:
        run_experiment(config)
    assert caught.value.refused == 2**30
    assert caught.value.estimate > 0 and caught.value.budget > 0
    assert describe_error(caught.value) == str(caught.value)  # the window's banner says the same


def test_core_sweep_names_the_point(monkeypatch):
    _patch(monkeypatch, "plain")
    config = ExperimentConfig(widths=(16, 8, 4), batch=4, min_time=0.02, threads=1)
    with pytest.raises(OutOfMemory, match=r"^out of memory at batch 2: "):
        run_sweep(config, "batch", (2, 4), probe_onednn=False)


@pytest.mark.parametrize(
    ("exc", "oom", "refused"),
    [
        (RuntimeError(TORCH_OOM), True, 2**30),
        (MemoryError(), True, None),
        (RuntimeError("std::bad_alloc"), True, None),
        (RuntimeError("CUDA out of memory. Tried to allocate 20.00 MiB"), True, None),
        (RuntimeError("could not create a primitive descriptor"), False, None),
        (ValueError("can't allocate memory"), False, None),
        (RuntimeError("mat1 and mat2 shapes cannot be multiplied"), False, None),
        # Windows' words, and torch's own type
        (
            RuntimeError("DefaultCPUAllocator: not enough memory: you tried to allocate 64 bytes."),
            True,
            64,
        ),
        (torch.OutOfMemoryError("out of memory"), True, None),
        # a user's own error that only says so is not the allocator's
        (RuntimeError("my cache is out of memory"), False, None),
        (RuntimeError("out of memory"), False, None),
        (RuntimeError("bad_alloc in my own parser"), False, None),
    ],
)
def test_out_of_memory_is_recognised(exc, oom, refused):
    assert is_out_of_memory(exc) is oom
    assert refused_bytes(exc) == refused

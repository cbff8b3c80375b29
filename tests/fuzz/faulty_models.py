"""The factory file the phase cases run, and the files beside it: a small model that fails when
it meets a given phase of the work, in a given way (both chosen by model arguments).

`build(when, n, kind)`: `when` names the phase (training mode, a batch of 16, its n-th call,
its layers being recorded or traced, oneDNN's bf16 maths, its weights in bfloat16, the held-out
rows, its backward pass); `kind` the way it fails (an Exception, a BaseException subclass of its
own, GeneratorExit, sys.exit with 0, 3 or nothing, a print then a raise, a change of working
folder then a raise). Each way fails on a line of its own, marked, so a case can name the frame
the one error line must point at.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

FACTORIES = '''\
import os
import sys

import torch
from torch import nn


class Boom(BaseException):
    """Not an Exception: the user's failure all the same."""


RAISES = {"fault": RuntimeError, "boom": Boom, "generator_exit": GeneratorExit}
EXITS = {"exit_0": 0, "exit_3": 3, "exit_none": None}


def fail(kind, words):
    """The user's code failing the way `kind` names."""
    if kind == "print_raise":
        print("USER-PRINT", words, flush=True)
        raise ValueError(words)  # after a print
    if kind == "chdir_raise":
        os.makedirs("moved", exist_ok=True)
        os.chdir("moved")
        raise OSError(words)  # after a chdir
    if kind in EXITS:
        sys.exit(EXITS[kind])  # the user's exit
    raise RAISES[kind](words)  # the user's raise


def dispatching():
    return torch._C._len_torch_dispatch_stack() > 0


class FailingGradient(torch.autograd.Function):
    """The identity forward; its backward fails (the user's code in the backward pass)."""

    @staticmethod
    def forward(ctx, x, kind):
        ctx.kind = kind
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        fail(ctx.kind, "fails at backward")


class Net(nn.Module):
    def __init__(self, when, n, kind):
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.when, self.n, self.kind = when, n, kind
        self.calls = self.trained = 0

    def fails(self, x):
        wrapped = "forward" in self.fc.__dict__
        return {
            "training": self.training,
            "later_training": self.training and self.trained > 1,
            "training_timed": self.training and self.trained > self.n,
            "held_out": not self.training and self.trained > 0,
            "batch": x.shape[0] >= 16,
            "eval_batch": not self.training and x.shape[0] > 1,
            "call": self.calls == self.n,
            "recording": wrapped and not dispatching(),
            "tracing": wrapped and dispatching(),
            "implicit": torch.backends.mkldnn.matmul.fp32_precision == "bf16",
            "pre_cast": self.fc.weight.dtype != torch.float32,
        }.get(self.when, False)

    def forward(self, x):
        self.calls += 1
        self.trained += self.training
        if self.fails(x):
            fail(self.kind, f"fails at {self.when}")
        y = self.fc(x)
        if self.when == "backward" and self.training:
            return FailingGradient.apply(y, self.kind)
        return y


def build(when="never", n=0, kind="fault"):
    return Net(when, n, kind), torch.randn(1, 8)


class Zero(nn.Module):
    def forward(self, x):
        return x[:, :4] * 2


def no_parameters():
    return Zero(), torch.randn(1, 8)


class Total(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x).sum()


def scalar():
    return Total(), torch.randn(1, 8)


def normalised():
    net = nn.Sequential(nn.Linear(8, 6), nn.BatchNorm1d(6), nn.Linear(6, 4))
    return net, torch.randn(1, 8)


def raises_boom():
    raise Boom("factory boom")


def raises_generator_exit():
    raise GeneratorExit("factory closing")


def fails_in_factory(kind="fault"):
    fail(kind, "fails at factory")
'''

#: The marker on the line each way of failing fails on (the frame the error line names).
MARKERS = {
    "fault": "# the user's raise",
    "boom": "# the user's raise",
    "generator_exit": "# the user's raise",
    "exit_0": "# the user's exit",
    "exit_3": "# the user's exit",
    "exit_none": "# the user's exit",
    "print_raise": "# after a print",
    "chdir_raise": "# after a chdir",
}
#: What the one line says each way failed, after the frame ("{words}": "fails at PHASE").
ERRORS = {
    "fault": "RuntimeError: {words}",
    "boom": "Boom: {words}",
    "generator_exit": "GeneratorExit: {words}",
    "exit_0": "called sys.exit(0)",
    "exit_3": "called sys.exit(3)",
    "exit_none": "called sys.exit()",
    "print_raise": "ValueError: {words}",
    "chdir_raise": "OSError: {words}",
}
#: Rows of the data file: a quarter (10) held out leaves 31 training rows, so a batch of 6
#: ends each epoch with a batch of one row.
ROWS = 41


def line_of(marker: str) -> int:
    """The line of the factory file holding `marker`."""
    return next(i for i, text in enumerate(FACTORIES.splitlines(), 1) if marker in text)


def write_files(folder: Path) -> dict[str, Path]:
    """The factory file, a data file of ROWS rows (8 features, 4 classes) and a checkpoint
    of the factory's model, written into `folder`."""
    model = folder / "faults.py"
    model.write_text(FACTORIES)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((ROWS, 8)).astype(np.float32)
    data = folder / "rows.npz"
    np.savez(data, x=x, y=np.arange(ROWS) % 4)
    checkpoint = folder / "weights.pt"
    torch.save({"fc.weight": torch.randn(4, 8), "fc.bias": torch.randn(4)}, checkpoint)
    return {"model": model, "data": data, "checkpoint": checkpoint}

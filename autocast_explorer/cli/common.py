"""What every command shares: the strict parser, the experiment flags, progress and outputs.

Every bad input ends with exit code 2 and one `error: …` line on stderr (UsageError or
ConfigError, caught once in `main`).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn, TextIO

from autocast_explorer.core.experiment.config import (
    ACTIVATIONS,
    DEFAULT_LR,
    DTYPES,
    HEADS,
    INPUT_DISTRIBUTIONS,
    ConfigError,
    ExperimentConfig,
    parse_widths,
)

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.sweeps.result import SweepResult

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """Bad input from the command line: printed as one `error:` line, exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse, but bad arguments give one `error: …` line instead of usage + message."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def _widths(text: str) -> tuple[int, ...]:
    try:
        return parse_widths(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(exc.rule) from None


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags for every field of ExperimentConfig (shared by run, sweep and friends)."""
    d = ExperimentConfig()
    g = parser.add_argument_group("experiment")
    g.add_argument(
        "--widths",
        type=_widths,
        default=d.widths,
        help="layer widths: input, hidden…, classes (default 256,256,256,10)",
    )
    g.add_argument("--batch", type=int, default=d.batch, help="rows per forward (default 128)")
    g.add_argument("--seed", type=int, default=d.seed, help="torch.manual_seed (default 0)")
    g.add_argument("--dtype", choices=DTYPES, default=d.dtype, help="autocast dtype")
    g.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    g.add_argument("--activation", choices=ACTIVATIONS, default=d.activation)
    g.add_argument("--head", choices=HEADS, default=d.head, help="optional output head")
    g.add_argument("--atol", type=float, default=d.atol, help="allclose atol (default 0.05)")
    g.add_argument("--rtol", type=float, default=d.rtol, help="allclose rtol (default 1e-5)")
    g.add_argument("--topk", type=int, default=d.topk, help="k for top-k agreement (default 5)")
    g.add_argument("--input-scale", type=float, default=d.input_scale, help="multiply x by this")
    g.add_argument("--input-distribution", choices=INPUT_DISTRIBUTIONS, default="normal")
    g.add_argument(
        "--min-time",
        type=float,
        default=d.min_time,
        help="measurement budget: seconds of timed forwards per mode (default 0.5)",
    )
    g.add_argument(
        "--allow-slow",
        action="store_true",
        help="run even if one forward is estimated to take over 10 s",
    )


def add_training_arguments(parser: argparse.ArgumentParser) -> None:
    """`run`'s training flags: values are checked by ExperimentConfig, naming the flag."""
    d = ExperimentConfig()
    g = parser.add_argument_group("training (--mode train)")
    g.add_argument(
        "--mode",
        default=d.mode,
        help="infer: time forwards (default); train: train a float32 and an autocast copy "
        "side by side",
    )
    g.add_argument(
        "--steps", type=_number(int), default=d.steps, help="training steps (default 50)"
    )
    g.add_argument(
        "--lr",
        type=_number(float),
        default=None,
        help=f"learning rate (default {DEFAULT_LR['sgd']:g} for sgd, {DEFAULT_LR['adamw']:g} "
        "for adamw)",
    )
    g.add_argument("--optimizer", default=d.optimizer, help="sgd (momentum 0.9) or adamw")
    g.add_argument(
        "--no-scaler",
        dest="scaler",
        action="store_false",
        help="float16: train without a GradScaler to see gradients underflow",
    )


def _number(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    """Parse a number; anything else is one line naming the flag (its range: the config)."""

    def parse(text: str) -> int | float:
        try:
            return kind(text)
        except ValueError:
            noun = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"must be {noun} (got {text!r})") from None

    return parse


def config_from_args(args: argparse.Namespace) -> ExperimentConfig:
    return ExperimentConfig(
        widths=args.widths,
        batch=args.batch,
        seed=args.seed,
        dtype=args.dtype,
        threads=args.threads,
        activation=args.activation,
        head=args.head,
        atol=args.atol,
        rtol=args.rtol,
        topk=args.topk,
        input_scale=args.input_scale,
        input_distribution=args.input_distribution,
        min_time=args.min_time,
        allow_slow=args.allow_slow,
        **training_fields(args),
    )


def training_fields(args: argparse.Namespace) -> dict[str, object]:
    """The training fields from `run`'s flags (commands without them keep the defaults)."""
    if not hasattr(args, "mode"):
        return {}
    lr = args.lr if args.lr is not None else DEFAULT_LR.get(args.optimizer, DEFAULT_LR["sgd"])
    return {
        "mode": args.mode,
        "steps": args.steps,
        "lr": lr,
        "optimizer": args.optimizer,
        "scaler": args.scaler,
    }


class StderrProgress:
    """Progress on stderr, only for a TTY and only once the work has taken over a second."""

    def __init__(self, stream: TextIO = sys.stderr, delay: float = 1.0) -> None:
        self.stream = stream
        self.enabled = stream.isatty()
        self.start = time.monotonic()
        self.delay = delay
        self.shown = False

    def __call__(self, fraction: float, message: str) -> None:
        if not self.enabled or time.monotonic() - self.start < self.delay:
            return
        self.shown = True
        self.stream.write(f"\r\x1b[K{fraction:4.0%} {message}")
        self.stream.flush()

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def write_output(path: str, text: str) -> None:
    """'-' means stdout; anything else is written atomically."""
    if path == "-":
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    from autocast_explorer.core.documents.files import write_atomic

    try:
        write_atomic(path, text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def write_outputs(args: argparse.Namespace, result: ExperimentResult | SweepResult) -> None:
    """--json and --csv of `run` and `sweep`: the result's JSON and CSV where asked."""
    if args.json:
        write_output(args.json, result.to_json())
    if args.csv:
        write_output(args.csv, result.to_csv())

"""What every command shares: the strict parser, the experiment flags, progress and outputs.

Every bad input ends with exit code 2 and one `error: …` line on stderr (UsageError or
ConfigError, caught once in `main`).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, NoReturn, TextIO

from autocast_explorer.core.experiment.config import (
    ACTIVATIONS,
    DTYPES,
    HEADS,
    INPUT_DISTRIBUTIONS,
    MODELS,
    ConfigError,
    ExperimentConfig,
    parse_widths,
)
from autocast_explorer.core.experiment.families import FAMILIES, family_fields

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


def _channels(text: str) -> tuple[int, ...]:
    try:
        return parse_widths(text, "channels")
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(exc.rule) from None


def _families_using(field_name: str) -> list[str]:
    """The families whose model a flag describes (for 'belongs to …' messages)."""
    return [
        name
        for name, fam in FAMILIES.items()
        if field_name in fam.uses or any(p.name == field_name for p in fam.params)
    ]


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags for every field of ExperimentConfig (shared by run, sweep and friends)."""
    d = ExperimentConfig()
    g = parser.add_argument_group("experiment")
    g.add_argument(
        "--model",
        choices=MODELS,
        default=d.model,
        help="model family (default mlp, the tutorial's model); each has its own flags below",
    )
    g.add_argument(
        "--widths",
        type=_widths,
        default=None,
        help="mlp: layer widths: input, hidden…, classes (default 256,256,256,10)",
    )
    g.add_argument("--batch", type=int, default=d.batch, help="rows per forward (default 128)")
    g.add_argument("--seed", type=int, default=d.seed, help="torch.manual_seed (default 0)")
    g.add_argument("--dtype", choices=DTYPES, default=d.dtype, help="autocast dtype")
    g.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    g.add_argument(
        "--activation",
        choices=ACTIVATIONS,
        default=None,
        help="between layers (mlp, cnn) or inside the feed-forward (transformer); default relu",
    )
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
    fam = parser.add_argument_group(
        "model families", "flags of --model cnn, transformer and rnn (each family's own)"
    )
    for field_name, param in family_fields().items():
        owners = ", ".join(_families_using(field_name))
        if param.kind == "bool":
            fam.add_argument(
                f"--no-{field_name.replace('_', '-')}",
                dest=field_name,
                action="store_const",
                const=False,
                default=None,
                help=f"{owners}: {param.help}",
            )
            continue
        kwargs: dict = {"default": None, "help": f"{owners}: {param.help}"}
        if param.kind == "ints":
            kwargs["type"] = _channels
            kwargs["metavar"] = "C0,C1,…"
        elif param.kind == "choice":
            kwargs["choices"] = param.choices
        else:
            kwargs["type"] = int
        fam.add_argument(param.flag, **kwargs)


def _flag_name(field_name: str) -> str:
    param = family_fields().get(field_name)
    if param is not None and param.kind == "bool":
        return f"--no-{field_name.replace('_', '-')}"
    return "--" + field_name.replace("_", "-")


def family_values(args: argparse.Namespace) -> dict:
    """The family parameters given on the command line; a flag of another family is refused.

    One `error:` line naming the flag and the families it belongs to, e.g.
    "--widths belongs to --model mlp, not cnn".
    """
    model = getattr(args, "model", "mlp")
    fam = FAMILIES[model]
    own = {p.name for p in fam.params}
    values = {}
    for field_name in ("widths", "activation", *family_fields()):
        value = getattr(args, field_name, None)
        if value is None:
            continue
        if field_name in own or field_name in fam.uses:
            values[field_name] = value
            continue
        owners = ", ".join(_families_using(field_name))
        raise UsageError(f"{_flag_name(field_name)} belongs to --model {owners}, not {model}")
    return values


def config_from_args(args: argparse.Namespace) -> ExperimentConfig:
    return ExperimentConfig(
        model=args.model,
        **family_values(args),
        batch=args.batch,
        seed=args.seed,
        dtype=args.dtype,
        threads=args.threads,
        head=args.head,
        atol=args.atol,
        rtol=args.rtol,
        topk=args.topk,
        input_scale=args.input_scale,
        input_distribution=args.input_distribution,
        min_time=args.min_time,
        allow_slow=args.allow_slow,
    )


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

"""What every command shares: the strict parser, the experiment flags, progress and outputs.

Every bad input ends with exit code 2 and one `error: …` line on stderr (UsageError or
ConfigError, caught once in `main`), before any measuring: output paths are checked here first.
A failure after measuring (an output that still cannot be written, memory running out) is
exit 1, and a result whose output failed is kept in a fallback file the message names.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, TextIO

from autocast_explorer.cli.signals import deferred
from autocast_explorer.core.experiment.config import USER_MODEL_FIELDS, ExperimentConfig
from autocast_explorer.core.experiment.config_fields import Part, field_specs
from autocast_explorer.core.experiment.config_parts import DEFAULT_LR
from autocast_explorer.core.experiment.config_rules import file_refusal
from autocast_explorer.core.experiment.families import FAMILIES, family_fields
from autocast_explorer.core.experiment.families.user.spec import is_user_spec
from autocast_explorer.core.runtime.errors import ConfigError

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.forecast import Forecast
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.learning.presets import Preset
    from autocast_explorer.core.sweeps.result import SweepResult

EXIT_FAILED = 1
EXIT_USAGE = 2

#: Values that start with '-' but are values, not flags: -5,10  -1e3  -0.5:2:3.
_NEGATIVE_VALUE = re.compile(r"^-(\.?\d[\d.,;:eE+\-]*|inf|infinity|nan)$", re.IGNORECASE)


#: ExperimentConfig's fields by name (each flag's type and default).
_FIELDS = {f.name: f for f in dataclasses.fields(ExperimentConfig)}


class UsageError(Exception):
    """Bad input from the command line: printed as one `error:` line, exit code 2."""


class FailedError(Exception):
    """The work ran but could not finish as asked (an output, memory): one `error:` line, exit 1."""


class Parser(argparse.ArgumentParser):
    """argparse, but bad arguments give one `error: …` line instead of usage + message, a
    value such as `--widths -5,10` reaches its validator instead of reading as a flag, and a
    flag is only ever its full name (no abbreviations)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)  # --mode must never read as --model
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_VALUE

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def _typed(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """A field's text parser (a comma list, the routes) as an argparse type: a bad value is one
    line naming the rule."""

    def typed(text: str) -> Any:
        try:
            return parse(text)
        except ConfigError as exc:
            raise argparse.ArgumentTypeError(exc.rule) from None

    return typed


def _families_using(field_name: str) -> list[str]:
    """The families whose model a flag describes (for 'belongs to …' messages)."""
    return [
        name
        for name, fam in FAMILIES.items()
        if field_name in fam.uses or any(p.name == field_name for p in fam.params)
    ]


#: The --help group of each part's flags: its title, its line, and whether argparse types and
#: chooses the values (the data and training flags leave that to the config's rules, whose
#: words name the field). The model, measurement and interventions parts share "experiment".
_GROUPS: dict[Part, tuple[str, str | None, bool]] = {
    "user model": (
        "your own model",
        "flags of --model SPEC; --seq and --image apply too (docs/models.md)",
        True,
    ),
    "data": (
        "real data",
        "train on real rows, then compare held-out answers in float32 and autocast",
        False,
    ),
    "training": ("training (--mode train)", None, False),
}


_EXPERIMENT: tuple[Part, ...] = ("model", "measurement", "interventions")


def _add_flag(group: Any, name: str, help_text: str | None = None, strict: bool = True) -> None:
    """The flag of config field `name`, from its definition (config.py): default None, meaning
    "not given" (the value then comes from --preset, else from ExperimentConfig)."""
    field = _FIELDS[name]
    spec = field_specs(ExperimentConfig)[name]
    flag = spec.flag or "--" + name.replace("_", "-")
    text = re.sub(r"`(\w+)`", _flag_of, help_text or spec.described(field.default))
    kwargs: dict[str, Any] = {"dest": name, "default": None, "help": text.replace("%", "%%")}
    if field.default is True:  # on unless turned off
        kwargs.update(action="store_const", const=False)
        flag = "--no-" + name.replace("_", "-")
    elif field.default is False:
        kwargs["action"] = "store_true"
    else:
        kwargs["metavar"] = spec.metavar
        enum = spec.rule.bounds().get("enum") if spec.rule else None
        kind = {"int": int, "float": float}.get(str(field.type).split(" |")[0])
        if spec.repeat:
            kwargs["action"] = "append"
        elif spec.text is not None:
            kwargs["type"] = _typed(spec.text)
        elif enum and strict:
            kwargs["choices"] = enum
        elif kind is not None:
            kwargs["type"] = kind if strict else _number(kind)
    group.add_argument(flag, **kwargs)


def _flag_of(match: re.Match[str]) -> str:
    """`min_time` in a help sentence → --min-time."""
    return "--" + match.group(1).replace("_", "-")


def add_part_arguments(parser: argparse.ArgumentParser, part: Part) -> None:
    """The flags of one part of the config, in field order (those with a flag)."""
    title, line, strict = _GROUPS[part]
    group = parser.add_argument_group(title, line)
    for name, spec in field_specs(ExperimentConfig).items():
        if spec.part == part and spec.flag is not None:
            _add_flag(group, name, strict=strict)


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags for every field of ExperimentConfig but real data and training (shared by run,
    sweep and friends): --preset, then --model (the flags below depend on it), the other model
    and measurement fields, each family's parameters and your own model's."""
    g = parser.add_argument_group("experiment")
    g.add_argument(
        "--preset",
        metavar="NAME|FILE",
        help="start from a preset: a built-in or saved name (tutorial, large-mlp, …) or a "
        "preset .json file; the flags below override its fields",
    )
    specs = field_specs(ExperimentConfig)
    shared = [n for n, s in specs.items() if s.part in _EXPERIMENT and s.flag is not None]
    for name in sorted(shared, key=lambda name: name != "model"):  # a stable sort: field order
        _add_flag(g, name)
    owners = [name for name, fam in FAMILIES.items() if fam.params]
    listed = f"{', '.join(owners[:-1])} and {owners[-1]}" if len(owners) > 1 else owners[0]
    fam = parser.add_argument_group(
        "model families", f"flags of --model {listed} (each family's own)"
    )
    for field_name, param in family_fields().items():
        _add_flag(fam, field_name, f"{', '.join(_families_using(field_name))}: {param.help}")
    add_part_arguments(parser, "user model")


def _flag_name(field_name: str) -> str:
    param = family_fields().get(field_name)
    if param is not None and param.kind == "bool":
        return f"--no-{field_name.replace('_', '-')}"
    return "--" + field_name.replace("_", "-")


def check_family_flags(args: argparse.Namespace, model: str) -> None:
    """Refuse a flag that belongs to another model family than `model`, naming both.

    One `error:` line, e.g. "--widths belongs to --model mlp, not cnn".
    """
    if is_user_spec(model):
        for field_name in ("widths", "activation", *family_fields()):
            if getattr(args, field_name, None) is not None and field_name not in ("seq", "image"):
                raise UsageError(
                    f"{_flag_name(field_name)} belongs to --model "
                    f"{', '.join(_families_using(field_name))}, not your own model"
                )
        return
    for field_name in USER_MODEL_FIELDS:
        if getattr(args, field_name, None) is not None:
            flag = "--model-arg" if field_name == "model_args" else _flag_name(field_name)
            raise UsageError(f"{flag} belongs to your own model (--model SPEC), not {model}")
    if model not in FAMILIES:
        why = file_refusal(model) or (
            f"{model!r}: not a family ({', '.join(FAMILIES)}) nor a spec such as hf:bert or "
            "my_model.py:build"
        )
        raise UsageError(f"--model {why}")
    fam = FAMILIES[model]
    own = {p.name for p in fam.params}
    for field_name in ("widths", "activation", *family_fields()):
        if getattr(args, field_name, None) is None or field_name in own | fam.uses:
            continue
        owners = ", ".join(_families_using(field_name))
        raise UsageError(f"{_flag_name(field_name)} belongs to --model {owners}, not {model}")


def add_data_arguments(parser: argparse.ArgumentParser) -> None:
    """`run`'s real-data flags; files are checked when read."""
    add_part_arguments(parser, "data")


def add_training_arguments(parser: argparse.ArgumentParser) -> None:
    """`run`'s training flags; the config checks them."""
    add_part_arguments(parser, "training")


def _number(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    """Parse a number; anything else is one line naming the flag (its range: the config)."""

    def parse(text: str) -> int | float:
        try:
            return kind(text)
        except ValueError:
            noun = "a whole number" if kind is int else "a number"
            raise argparse.ArgumentTypeError(f"must be {noun} (got {text!r})") from None

    return parse


def config_from_args(
    args: argparse.Namespace, base: ExperimentConfig | None = None
) -> ExperimentConfig:
    """`base` (a preset's config, else the defaults) with every flag that was given applied.

    A flag sets the config field named like its dest; None means it was not given. Choosing an
    optimizer without --lr brings that optimizer's usual learning rate.
    """
    base = base or ExperimentConfig()
    check_family_flags(args, getattr(args, "model", None) or base.model)
    fields = (f.name for f in dataclasses.fields(ExperimentConfig))
    given = {name: getattr(args, name) for name in fields if getattr(args, name, None) is not None}
    if is_user_spec(given.get("model", base.model)) and "image" in given:
        given["input_image"] = given.pop("image")  # a user model's image side
    config = base.replace(**given)
    if "optimizer" in given and "lr" not in given:
        config = config.replace(lr=DEFAULT_LR[config.optimizer])
    return config


def preset_from_args(args: argparse.Namespace) -> Preset | None:
    """The preset named by --preset (None without it); a bad one is a UsageError.

    A value that names an existing entry other than a folder (a FIFO or device is refused by
    name, never opened), ends in .json or holds a path separator is read as a file; anything
    else is looked up by id or name among the built-in and the user's presets.
    """
    key = getattr(args, "preset", None)
    if key is None:
        return None
    from autocast_explorer.core.learning.presets import (
        PresetError,
        builtin_presets,
        find_preset,
        load_preset,
        scan_presets,
        user_presets_dir,
    )

    path = Path(key).expanduser()
    try:
        named_file = os.path.lexists(path) and not path.is_dir()  # a FIFO, device, link loop too
        if named_file or key.endswith(".json") or "/" in key or os.sep in key:
            return load_preset(path)
        user, _unusable = scan_presets(user_presets_dir())
        return find_preset([*builtin_presets(), *user], key)
    except PresetError as exc:
        raise UsageError(f"preset: {exc}") from None
    except KeyError as exc:
        raise UsageError(f"preset: {exc.args[0]}") from None


class StderrProgress:
    """Progress on stderr, only for a TTY and only once the work has taken over a second."""

    def __init__(self, stream: TextIO | None = None, delay: float = 1.0) -> None:
        # sys.stderr as it is now, not as it was at import (a test's capture, a redirect)
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = self.stream.isatty()
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

    def __enter__(self) -> StderrProgress:
        return self

    def announce(self, forecast: Forecast) -> bool:
        """A long run's forecast on stderr before it starts (the engine's `confirm`: it runs)."""
        self.close()
        self.shown = False
        self.stream.write(f"{forecast.text()}\n")
        self.stream.flush()
        return True

    def __exit__(self, *exc_info: object) -> None:
        """The line is cleared however the work ends (done, refused, Ctrl-C)."""
        self.close()


#: Paths that are this process's standard output ("-" is ours; the rest the system's names).
STDOUT_PATHS = ("-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")


def to_stdout(*paths: str | None) -> bool:
    """True when any output goes to standard output: then the summary is not printed there."""
    return any(path in STDOUT_PATHS for path in paths)


def check_output(flag: str, path: str | None, what: str = "file") -> None:
    """Refuse an output path that cannot be written, before any work (UsageError, exit 2)."""
    if path is None or (path == "-" and what == "file"):
        return
    from autocast_explorer.core.documents.files import UnwritablePath, check_writable
    from autocast_explorer.core.documents.reader import clean_text

    try:
        if what == "folder":
            from autocast_explorer.core.reports.report import check_report_folder

            check_report_folder(path)
        else:
            check_writable(path, what)
    except UnwritablePath as exc:
        raise UsageError(f"{flag}: {clean_text(str(exc))}") from None


#: The output flags of every command, and what each names.
OUTPUT_FLAGS = (("json", "file"), ("csv", "file"), ("report", "folder"))


def check_outputs(args: argparse.Namespace) -> None:
    """Every output flag of a command (--json, --csv, --report) checked before measuring, then
    made absolute: the user's code may change the working folder (os.chdir in a factory), and a
    relative --json must still land where it was asked for."""
    check_distinct(args)
    for flag, what in OUTPUT_FLAGS:
        check_output(f"--{flag}", getattr(args, flag, None), what)
    for flag, _what in OUTPUT_FLAGS:
        path = getattr(args, flag, None)
        if path and path != "-" and not os.path.isabs(path):
            with contextlib.suppress(OSError):  # no working folder: the check refused it
                setattr(args, flag, os.path.join(os.getcwd(), path))


def check_distinct(args: argparse.Namespace) -> None:
    """Two outputs on one file, or a file inside the report folder (which is replaced whole),
    would lose one of them: refused before measuring."""
    from autocast_explorer.core.documents.files import is_stream
    from autocast_explorer.core.documents.reader import cap_text

    def where(path: str) -> str:
        return os.path.realpath(os.path.abspath(path))

    files = [
        (f"--{flag}", path)
        for flag in ("json", "csv")
        if (path := getattr(args, flag, None)) and path != "-" and not is_stream(Path(path))
    ]
    if len(files) == 2 and where(files[0][1]) == where(files[1][1]):
        raise UsageError(f"--json and --csv name the same file ({cap_text(files[0][1], 200)})")
    report = getattr(args, "report", None)
    if report:
        folder = where(report)
        for flag, path in files:
            if where(path).startswith(folder + os.sep):
                raise UsageError(
                    f"{flag} {cap_text(path, 200)} is inside the --report folder, which is "
                    "replaced whole (it gets result.json and result.csv of its own)"
                )


class Stager(Protocol):
    """What publish_outputs stages besides files (the report): returns it written aside."""

    def __call__(self) -> Publishable: ...


class Publishable(Protocol):
    def publish(self) -> None: ...

    def discard(self) -> None: ...


def publish_outputs(
    files: Sequence[tuple[str, str]],
    keep: str,
    name: str = "result.json",
    stagers: Sequence[tuple[str, Stager]] = (),
) -> list[str]:
    """Write every output aside, then put them all in place together: all of them or none.

    `files` are (path, text); '-' is stdout. Files and what `stagers` write ((path, stager):
    the report) are written aside first; stdout and streams (FIFOs, devices) come next, as
    they cannot be put aside; then everything staged is renamed into place with signals
    deferred. A signal while staging discards what was staged (it is raised at once, as
    during every write); a failure discards it too and keeps `keep` (the whole measurement)
    in a fallback file named like the output (`name` for a device). Returns the problems.
    """
    from autocast_explorer.core.documents.files import UnwritablePath, is_stream, stage

    staged: list[Publishable] = []
    current = ""
    try:
        try:
            later = []
            for path, text in files:
                if path == "-" or is_stream(Path(path)):
                    later.append((path, text))
                    continue
                current = path
                staged.append(stage(path, text))
            for where, stager in stagers:
                current = where
                staged.append(stager())
            for path, text in later:
                current = path
                if path == "-":
                    sys.stdout.write(text if text.endswith("\n") else text + "\n")
                    sys.stdout.flush()
                else:
                    staged.append(stage(path, text))
            with deferred():  # put in place together: a signal here waits until all are
                current = ""
                for item in staged:
                    item.publish()
        except BaseException:
            for item in staged:
                item.discard()
            raise
    except (OSError, UnwritablePath) as exc:
        if not current:
            raise
        reason = getattr(exc, "strerror", None) or str(exc)
        count = len(files) + len(stagers)
        others = " (so none of the other outputs was written)" if count > 1 else ""
        return [cannot_write(current, reason + others, keep, keep_name(current, name))]
    return []


def keep_name(path: str, default: str) -> str:
    """The fallback file's name: the output's own when it has an extension (a device has none)."""
    own = Path(path).name
    return own if Path(own).suffix == Path(default).suffix else default


def cannot_write(path: str, reason: str, data: str, name: str) -> str:
    """'cannot write P: R; the result was saved to F instead' (F: core.documents.files)."""
    from autocast_explorer.core.documents.files import save_fallback
    from autocast_explorer.core.documents.reader import cap_text, clean_text

    kept = save_fallback(data, name)
    where = (
        f"the result was saved to {kept} instead" if kept else "no fallback file could be written"
    )
    return f"cannot write {cap_text(clean_text(path), 200)}: {reason}; {where}"


def result_files(
    args: argparse.Namespace, result: ExperimentResult | SweepResult
) -> list[tuple[str, str]]:
    """--json and --csv of `run` and `sweep`: (path, text) for publish_outputs."""
    files = []
    if args.json:
        files.append((args.json, result.to_json()))
    if args.csv:
        files.append((args.csv, result.to_csv()))
    return files


def raise_problems(problems: list[str]) -> None:
    if problems:
        raise FailedError("; ".join(problems))


@contextlib.contextmanager
def resource_errors(config: ExperimentConfig) -> Iterator[None]:
    """Memory running out while measuring is one `error:` line naming what the allocator
    refused next to what the memory guard estimated (exit 1), never a traceback."""
    from autocast_explorer.core.experiment.guards import memory_outcome

    try:
        with memory_outcome(config):
            yield
    except MemoryError as exc:  # OutOfMemory, its message made by core
        raise FailedError(str(exc)) from None

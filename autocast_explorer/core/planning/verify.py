"""Verifying a plan: rebuild the model from the plan's config in a fresh process, apply the
chosen candidate, and check again what the plan claims.

Checked, each a line with its figures:
- the kept layers exist, and under autocast they compute float32 while other layers compute the
  lower dtype (the eager forward; a compiled plan traces the same wrappers);
- the criterion: met now exactly when the plan said the chosen candidate met it;
- the speed: a plan that claimed the chosen candidate faster than float32 eager (its whole
  interval above 1) must be again, timed with the run's protocol and the config's budgets; any
  other claim is reported with the new figure.

`check_plan` does it in this process (what `autocast-explorer plan --verify` runs);
`verify_plan` starts that command in a fresh Python, for the window's worker thread.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

from autocast_explorer.core.documents.reader import (
    MAX_DOCUMENT_BYTES,
    DocumentFormatError,
    clean_text,
)
from autocast_explorer.core.experiment.capture import first_tensor
from autocast_explorer.core.experiment.interventions import module_paths
from autocast_explorer.core.hardware.cpu import environment
from autocast_explorer.core.planning.bench import (
    CandidateFailed,
    LiveBench,
    candidate_context,
    forward_seconds,
)
from autocast_explorer.core.planning.choice import FLOAT32, Choice
from autocast_explorer.core.planning.criterion import Criterion, parse_criterion
from autocast_explorer.core.planning.document import PlanDocument, SpeedupInterval
from autocast_explorer.core.planning.search import document_interval
from autocast_explorer.core.planning.sensitivity import judge_for
from autocast_explorer.core.planning.subject import Subject, prepare_subject
from autocast_explorer.core.planning.summary import value_text
from autocast_explorer.core.planning.words import interval_text
from autocast_explorer.core.runtime.autocast import TORCH_DTYPES, autocast_context
from autocast_explorer.core.runtime.dtypes import dtype_name
from autocast_explorer.core.runtime.progress import CancelFn, Cancelled, ProgressFn, Reporter
from autocast_explorer.core.runtime.threads import torch_threads
from autocast_explorer.core.runtime.wrapping import wrapped_forwards

#: The repository root that holds the package: a fresh Python finds it there too.
_PACKAGE_PARENT = Path(__file__).resolve().parents[3]
#: How often the waiting thread looks at `cancel` while the fresh process works.
POLL_S = 0.1


@dataclass(frozen=True)
class Verification:
    """Whether the plan held, and what was checked (a line each, with the figures)."""

    passed: bool
    lines: tuple[str, ...]


class PlanFileError(ValueError):
    """A plan file that cannot be read: 'PATH: why' in one line."""


def load_plan_file(path: str | os.PathLike[str]) -> PlanDocument:
    """The plan in `path`; PlanFileError for a missing, oversized, corrupt or foreign file."""
    target = Path(path)
    name = clean_text(str(target))
    try:
        if not target.is_file():
            why = "no such file" if not target.exists() else "not a file"
            raise PlanFileError(f"{name}: {why}")
        with target.open("rb") as handle:
            raw = handle.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as exc:
        raise PlanFileError(f"{name}: cannot read: {exc.strerror or exc}") from None
    try:
        return PlanDocument.from_json(raw)
    except DocumentFormatError as exc:
        raise PlanFileError(f"{name}: {' '.join(str(exc).split())}") from None


def _direction(interval: SpeedupInterval | None) -> str:
    if interval is None:
        return "untimed"
    if interval.low > 1:
        return "faster"
    return "slower" if interval.high < 1 else "unclear"


def kept_layers_line(subject: Subject, choice: Choice) -> tuple[bool, str]:
    """Whether the kept layers exist and compute float32 under the chosen autocast."""
    paths = set(module_paths(subject.model))
    missing = [name for name in choice.keep if name not in paths]
    if missing:
        return False, f"kept layers missing from the rebuilt model: {', '.join(missing)}"
    if not choice.keep or not choice.lowered or choice.route == "implicit":
        return True, "no layer kept in float32" if not choice.keep else "kept layers found"
    seen: dict[str, str] = {}

    def around(
        name: str,
        module: torch.nn.Module,
        call: Callable[[], object],
        args: tuple[object, ...],
        kwargs: dict[str, object],
    ) -> object:
        out = call()
        tensor = first_tensor(out)
        if tensor is not None and (name in subject.layers or name in choice.keep):
            seen[name] = dtype_name(tensor.dtype)
        return out

    eager = Choice("eager", choice.dtype, choice.threads, choice.keep)
    with (
        candidate_context(subject.model, eager),
        wrapped_forwards(subject.model, around),
        autocast_context(TORCH_DTYPES[choice.dtype]),
    ):
        subject.model(subject.x)
    wrong = [name for name in choice.keep if seen.get(name, FLOAT32) != FLOAT32]
    lowered = [
        name for name, dtype in seen.items() if dtype == choice.dtype and name not in choice.keep
    ]
    words = (
        f"kept in float32: {', '.join(choice.keep)} — "
        f"{'float32' if not wrong else 'NOT float32: ' + ', '.join(wrong)}; "
        f"{len(lowered)} other layer{'s' if len(lowered) != 1 else ''} gave {choice.dtype}"
    )
    return not wrong, words


def check_plan(
    plan: PlanDocument, progress: ProgressFn | None = None, cancel: CancelFn | None = None
) -> Verification:
    """Check the plan in this process (module docstring)."""
    reporter = Reporter(progress, cancel)
    criterion = parse_criterion(plan.criterion)
    choice = Choice.of(plan.chosen)
    lines: list[str] = []
    with torch_threads(plan.config.threads) as threads, torch.no_grad():
        subject = prepare_subject(plan.config, reporter.span(0.0, 0.3))
        lines.append(f"rebuilt {subject.config.title} from the plan's config")
        here = environment(threads).cpu_model
        if here != plan.environment.cpu_model:
            lines.append(f"note: the plan was made on {plan.environment.cpu_model}; this is {here}")
        kept_ok, kept_words = kept_layers_line(subject, choice)
        lines.append(kept_words)
        reporter.check()
        judge = judge_for(subject, criterion)
        bench = LiveBench(
            subject, judge, threads, forward_seconds(lambda: subject.model(subject.x))
        )
        try:
            criterion_ok = _criterion_check(plan, criterion, bench, choice, lines)
            reporter.check()
            speed_ok = _speed_check(plan, bench, choice, threads, lines, reporter.span(0.5, 1))
        finally:
            bench.release()
    passed = kept_ok and criterion_ok and speed_ok
    return Verification(passed, tuple(lines))


def _criterion_check(
    plan: PlanDocument, criterion: Criterion, bench: LiveBench, choice: Choice, lines: list[str]
) -> bool:
    claimed = plan.outcome != "none"
    try:
        measured = bench.judge(choice)
    except CandidateFailed as exc:
        lines.append(f"criterion {criterion}: the chosen candidate failed here: {exc}")
        return False
    met = measured.met(criterion)
    lines.append(
        f"criterion {criterion}: {value_text(criterion, measured.finite)} now, "
        f"{value_text(criterion, plan.chosen.criterion_value)} in the plan — "
        f"{'met' if met else 'missed'}{'' if met == claimed else ' (the plan said otherwise)'}"
    )
    return met == claimed


def _speed_check(
    plan: PlanDocument,
    bench: LiveBench,
    choice: Choice,
    threads: int,
    lines: list[str],
    reporter: Reporter,
) -> bool:
    if choice == Choice("eager", FLOAT32, threads):
        lines.append("speed: the plan is float32 eager itself, nothing to time")
        return True
    config = plan.config
    interval = document_interval(bench.time(choice, 2 * config.time_limit, reporter))
    claimed = _direction(plan.chosen.speedup_interval)
    now = _direction(interval)
    holds = claimed != "faster" or now == "faster"
    lines.append(
        f"speed against float32 eager: {interval_text(interval)} now, "
        f"{interval_text(plan.chosen.speedup_interval)} in the plan — "
        + ("holds" if holds else "no longer clearly faster")
    )
    return holds


def verify_plan(plan: PlanDocument, cancel: CancelFn | None = None) -> Verification:
    """`autocast-explorer plan --verify` on `plan`, in a fresh Python; Cancelled when `cancel`
    says so (the fresh process is ended first)."""
    with tempfile.TemporaryDirectory(prefix="autocast-explorer-verify-") as folder:
        path = Path(folder) / "plan.json"
        path.write_text(plan.to_json(), encoding="utf-8")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(_PACKAGE_PARENT), env.get("PYTHONPATH", "")) if p
        )
        command = [sys.executable, "-m", "autocast_explorer", "plan", "--verify", str(path)]
        child = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        while True:
            try:
                out, err = child.communicate(timeout=POLL_S)
                break
            except subprocess.TimeoutExpired:
                if cancel is not None and cancel():
                    child.terminate()
                    child.communicate()
                    raise Cancelled("cancelled") from None
    lines = [line for line in out.splitlines() if line.strip()]
    if child.returncode not in (0, 1) or not lines:
        lines += [line for line in err.splitlines() if line.strip()][-3:]
    return Verification(child.returncode == 0, tuple(lines))

"""`autocast-explorer plan`: what to run for this model on this CPU, measured (docs/deciding.md);
`plan --verify PLAN.json`: check a saved plan again in this process.

Exit codes: 0 for any of the three outcomes (a plan, float32 is fastest, nothing meets the
criterion) and for a verify that held; 1 for a verify that failed; 2 for bad input (one line).
"""

from __future__ import annotations

import argparse
import sys

from autocast_explorer.cli.common import (
    EXIT_FAILED,
    StderrProgress,
    UsageError,
    add_config_arguments,
    add_data_arguments,
    check_outputs,
    config_from_args,
    preset_from_args,
    publish_outputs,
    raise_problems,
    resource_errors,
    to_stdout,
)
from autocast_explorer.cli.user_code import running_user_code

#: Seconds a plan searches for unless told (--budget).
DEFAULT_BUDGET_S = 60.0

PLAN_EPILOG = """\
Criteria: accuracy-drop<=P (points of held-out accuracy, needs --data; met only when the
whole 95% interval is), agree>=P% (rows whose argmax matches float32's), sqnr>=DB.
The search tries every route unless --routes names some, both lower dtypes (--dtype first),
threads 1 … the free cores and float32 keep-sets grown from the layers' sensitivity, on top
of the layers --keep-float32 keeps (kept in every lower-precision candidate). The budget
counts from the command's start.
Exit 0 for a plan, "float32 is fastest here" or "no plan meets the criterion"; 2 for bad
input (one `error:` line); with --verify, 1 when the plan no longer holds.

examples:
  autocast-explorer plan --criterion 'agree>=99.5%'
  autocast-explorer plan --model cnn --criterion 'sqnr>=30' --budget 120 --json plan.json
  autocast-explorer plan --data digits --criterion 'accuracy-drop<=0.5'
  autocast-explorer plan --dtype float16 --routes eager --criterion 'agree>=99%' --json -
  autocast-explorer plan --model hf:bert --keep-float32 LayerNorm --criterion 'sqnr>=30'
  autocast-explorer plan --verify plan.json
"""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The `plan` subcommand and its flags."""
    plan = sub.add_parser(
        "plan",
        help="search for the fastest way to run this model that meets a criterion",
        description="Find which layers break lower precision, then search routes, dtypes, "
        "threads and layers kept in float32 for the fastest choice that meets a criterion, "
        "timed against plain float32 eager.",
        epilog=PLAN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_config_arguments(plan)
    add_data_arguments(plan)
    group = plan.add_argument_group("plan")
    group.add_argument(
        "--criterion",
        metavar="EXPR",
        help="what the plan must keep: accuracy-drop<=P, agree>=P%%, sqnr>=DB",
    )
    group.add_argument(
        "--budget",
        metavar="SECONDS",
        type=float,
        help=f"seconds the whole search may take (default {DEFAULT_BUDGET_S:g})",
    )
    group.add_argument("--json", metavar="PATH|-", help="write the plan JSON ('-': stdout only)")
    group.add_argument(
        "--verify",
        metavar="PLAN.json",
        help="rebuild the plan's model, apply the plan, check its criterion and speedup again",
    )
    plan.set_defaults(handler=cmd_plan, csv=None, report=None)
    return plan


def cmd_plan(args: argparse.Namespace) -> int:
    if args.verify is not None:
        return cmd_verify(args)
    if args.criterion is None:
        raise UsageError("plan needs --criterion EXPR, e.g. --criterion 'agree>=99.5%'")
    from autocast_explorer.core.planning.criterion import CriterionError, parse_criterion

    try:
        criterion = parse_criterion(args.criterion)
    except CriterionError as exc:
        raise UsageError(str(exc)) from None
    preset = preset_from_args(args)
    config = config_from_args(args, preset.config if preset else None)
    check_outputs(args)
    from autocast_explorer.core.planning.search import make_plan
    from autocast_explorer.core.planning.summary import format_plan

    routes = config.routes if args.routes is not None else None
    budget = DEFAULT_BUDGET_S if args.budget is None else args.budget
    with StderrProgress() as progress, resource_errors(config), running_user_code(config):
        plan = make_plan(
            config,
            criterion,
            budget,
            progress=progress,
            routes=routes,
            started=getattr(args, "started", None),
        )
    text = plan.to_json()
    files = [(args.json, text)] if args.json else []
    problems = publish_outputs(files, text, name=f"{plan.KIND}.json")
    if not to_stdout(args.json):
        print(format_plan(plan))
    raise_problems(problems)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """`plan --verify`: each check a line on stdout; 0 when the plan held, 1 when not."""
    given = [flag for flag in ("criterion", "budget", "json") if getattr(args, flag) is not None]
    if given:
        raise UsageError(f"--verify takes the plan's own settings, not --{given[0]}")
    from autocast_explorer.core.planning.verify import PlanFileError, check_plan, load_plan_file

    try:
        plan = load_plan_file(args.verify)
    except PlanFileError as exc:
        raise UsageError(str(exc)) from None
    with StderrProgress() as progress, resource_errors(plan.config), running_user_code(plan.config):
        verification = check_plan(plan, progress=progress)
    for line in verification.lines:
        print(line)
    verdict = "the plan holds" if verification.passed else "the plan no longer holds"
    print(f"verify: {verdict}")
    sys.stdout.flush()
    return 0 if verification.passed else EXIT_FAILED

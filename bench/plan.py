"""The measured precision plan: the planted faults it must find, and its answer for the tutorial
models on this CPU, natively and under the AVX2 emulation switches (`make test-as-avx2`'s).

  python bench/plan.py                         # everything (minutes: compiles, 4 models × 2)
  python bench/plan.py --part faults           # (a) and (b): what is found and kept
  python bench/plan.py --part models --env avx2 --models cnn --budget 120
  python bench/plan.py --part faults --routes eager --budget 20     # a quick correctness run

(a) `float16_overflow` under --dtype float16, criterion agree>=99%: the locator must name
`amplify` first (ranking and first divergent row) and the plan's float16 candidate keep exactly
it and meet the criterion. (b) `bfloat16_offset`, criterion agree>=99%: the locator must name
`shift`, and keeping it alone must restore agreement. A check that fails is printed as FAILED
and the script exits 1. (c) the MLP, CNN, transformer and hf:bert: the plan's outcome, choice
and interval, and its wall time against the budget (target ≤ 1.3×); timing is the machine's,
so run it on a quiet one. Each model and environment runs in its own process (the switches
act when torch loads). Prints Markdown.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AVX2_SWITCHES = {
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    "ATEN_CPU_CAPABILITY": "avx2",
    "AUTOCAST_EXPLORER_CPU_FLAGS": "avx2,fma",
}
FAULTS = "autocast_explorer.examples.planted_faults"
#: (a) and (b): config fields, criterion, the row that must be named and kept.
FAULT_CASES = {
    "a": ({"model": f"{FAULTS}:float16_overflow", "dtype": "float16"}, "agree>=99%", "amplify"),
    "b": ({"model": f"{FAULTS}:bfloat16_offset", "dtype": "bfloat16"}, "agree>=99%", "shift"),
}
#: (c): config fields and criterion per model (BERT's base model gives hidden states: no argmax).
MODEL_CASES = {
    "mlp": ({"model": "mlp"}, "agree>=99.5%"),
    "cnn": ({"model": "cnn"}, "agree>=99.5%"),
    "transformer": ({"model": "transformer"}, "agree>=99.5%"),
    "hf:bert": (
        {
            "model": "hf:bert",
            "batch": 8,
            "seq": 64,
            "model_args": {
                "num_hidden_layers": 2,
                "hidden_size": 128,
                "num_attention_heads": 2,
                "intermediate_size": 512,
            },
        },
        "sqnr>=30",
    ),
}


def plan_one(fields: dict, criterion: str, budget: float, routes: list[str] | None) -> dict:
    """make_plan in this process; what the tables need, as JSON-able values."""
    import torch

    from autocast_explorer.core.experiment.config import ExperimentConfig
    from autocast_explorer.core.planning.ranking import ranked
    from autocast_explorer.core.planning.search import make_plan

    config = ExperimentConfig.from_dict({**fields, "threads": 1, "allow_slow": True})
    start = time.monotonic()
    plan = make_plan(config, criterion, budget, routes=routes)
    wall = time.monotonic() - start
    from autocast_explorer.core.planning.criterion import parse_criterion

    order = [row.name for row in ranked(plan.sensitivity, parse_criterion(criterion))]
    return {
        "capability": torch.backends.cpu.get_cpu_capability(),
        "plan": json.loads(plan.to_json()),
        "ranking": order,
        "wall": wall,
    }


def run_child(args: list[str], avx2: bool) -> dict:
    """This script's --child in a fresh Python (the switches act when torch loads)."""
    env = dict(os.environ)
    if avx2:
        env.update(AVX2_SWITCHES)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    done = subprocess.run(
        [sys.executable, __file__, "--child", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.splitlines()[-1])


def _interval(choice: dict) -> str:
    interval = choice.get("speedup_interval")
    if not interval:
        return "—"
    return f"{interval['estimate']:.2f}× ({interval['low']:.2f}–{interval['high']:.2f})"


def _choice(choice: dict) -> str:
    kept = f", keep {'+'.join(choice['keep_float32'])}" if choice["keep_float32"] else ""
    return f"{choice['route']} {choice['dtype']} ×{choice['threads']}{kept}"


def check_fault(name: str, found: dict) -> list[str]:
    """(a)/(b)'s checks, each 'ok: …' or 'FAILED: …'."""
    _fields, _criterion, row = FAULT_CASES[name]
    plan = found["plan"]
    dtype = plan["config"]["dtype"]
    set_aside = ("keeps a layer more than needed", "float32 after all")
    eager = [
        c
        for c in plan["candidates"]
        if c["route"] == "eager"
        and c["dtype"] == dtype
        and c["met"]
        and not c["why_not"].startswith(set_aside)
    ]
    kept = eager[0]["keep_float32"] if eager else None
    rows = {r["name"]: r for r in plan["sensitivity"]}
    checks = [
        (found["ranking"][0] == row, f"the locator ranks {found['ranking'][0]} first"),
        (plan["first_divergent"] == row, f"first divergent row: {plan['first_divergent']}"),
        (rows[row]["leave_out"] >= 99, f"{row} alone kept: agree {rows[row]['leave_out']:.2f}%"),
        (kept == [row], f"eager {dtype} meets the criterion keeping {kept}"),
    ]
    return [f"{'ok' if good else 'FAILED'}: {words}" for good, words in checks]


def faults_part(budget: float, routes: list[str] | None) -> bool:
    print("### Planted faults (native)\n")
    good = True
    for name, (fields, criterion, _row) in FAULT_CASES.items():
        found = run_child(_child_args(fields, criterion, budget, routes), avx2=False)
        plan = found["plan"]
        print(
            f"**({name})** `{fields['model'].split(':')[1]}` · --dtype {fields['dtype']} · "
            f"{criterion} · budget {budget:g} s, wall {found['wall']:.1f} s\n"
        )
        print(
            f"- outcome **{plan['outcome']}**: {_choice(plan['chosen'])}, "
            f"{_interval(plan['chosen'])}"
        )
        print(f"- ranking (worst first): {', '.join(found['ranking'])}")
        for line in check_fault(name, found):
            good &= line.startswith("ok")
            print(f"- {line}")
        print()
    return good


def models_part(
    models: list[str], envs: list[str], budget: float, routes: list[str] | None
) -> None:
    print("### The tutorial models: the plan's answer\n")
    print(
        "| model | env | capability | outcome | chosen | speedup (95%) | criterion | "
        "wall / budget |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for model in models:
        fields, criterion = MODEL_CASES[model]
        for env in envs:
            found = run_child(_child_args(fields, criterion, budget, routes), avx2=env == "avx2")
            plan = found["plan"]
            value = plan["chosen"]["criterion_value"]
            print(
                f"| {model} | {env} | {found['capability']} | {plan['outcome']} | "
                f"{_choice(plan['chosen'])} | {_interval(plan['chosen'])} | {criterion}: "
                f"{'—' if value is None else f'{value:.4g}'} | "
                f"{found['wall']:.0f} s / {budget:g} s ({found['wall'] / budget:.2f}×) |",
                flush=True,
            )


def _child_args(fields: dict, criterion: str, budget: float, routes: list[str] | None) -> list:
    args = [json.dumps(fields), criterion, str(budget)]
    return [*args, ",".join(routes)] if routes else args


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("faults", "models", "all"), default="all")
    parser.add_argument("--env", choices=("native", "avx2", "both"), default="both")
    parser.add_argument("--models", default=",".join(MODEL_CASES))
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--routes", default="", help="default: every route")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        fields, criterion, budget, *routes = args.child
        routes_list = routes[0].split(",") if routes else None
        print(json.dumps(plan_one(json.loads(fields), criterion, float(budget), routes_list)))
        return 0
    routes = args.routes.split(",") if args.routes else None
    print(f"load {os.getloadavg()[0]:.2f} · {os.cpu_count()} cores · budget {args.budget:g} s\n")
    good = True
    if args.part in ("faults", "all"):
        good = faults_part(args.budget, routes)
    if args.part in ("models", "all"):
        envs = ["native", "avx2"] if args.env == "both" else [args.env]
        models_part(args.models.split(","), envs, args.budget, routes)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())

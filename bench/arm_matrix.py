"""The explorer on emulated Arm CPUs: does what it says agree with what torch does?

Behaviour only (dtypes, errors, findings, capabilities), never speed: under qemu user-mode
emulation everything is 300–3000× slower and bf16 looks slower than float32. Needs the arm64
Pythons of ../shared/arm/recipe.sh (both torch versions):

    bash ../shared/arm/recipe.sh && TORCH=2.10.0 bash ../shared/arm/recipe.sh
    (the core's other dependencies, pydantic and its three companions, are installed into
    those venvs by this script on first use, from aarch64 wheels at constraints.txt's pins)
    nice -n 19 .venv/bin/python bench/arm_matrix.py            # ~1 h on a quiet 2-core machine
    .venv/bin/python bench/arm_matrix.py --models neoverse-n1 --torch 2.13.0 --families lstm

For each CPU model and torch version it runs bench/arm_cell.py inside the emulated Python (each
model under a qemu -L prefix of its own, so its fake /proc/cpuinfo is not the recipe's shared
one) (the explorer's `run` for every family and `ops`,
plus a direct torch probe with plain nn modules), then checks per cell:

- capabilities: the explorer's native-bf16 answer and low-precision flags are torch's
  (`torch.cpu.get_capabilities()`, or /proc/cpuinfo's Features where torch has no such
  function), and its CPU name is the core /proc/cpuinfo's MIDR fields name, never "Unknown";
- dtypes: every layer kind's autocast output dtype is the one the plain module gave, and the
  explorer reports an error exactly where torch raised;
- findings: "could not run" exactly where torch raised; "silently kept … in float32" exactly
  where a module whose op the AMP docs list as lower precision (Linear, Conv2d, LSTM) returned
  float32 without an error — and never for the GRU (its op is on no list);
- verdict: the sentence says native bf16 exactly when torch's flags have bf16, and names no
  x86 instruction set (AMX, AVX) on Arm;
- ops: the explorer's op probe gives, for float32 inputs, the dtype (or error) the direct call
  gave, for linear, conv2d, bmm, lstm and gru.

The table goes into bench/RESULTS.md (section "Arm under emulation"); raw cells to --raw.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autocast_explorer.core.hardware.capabilities import normalize  # noqa: E402
from autocast_explorer.core.hardware.cpu import LOW_PRECISION_FLAGS  # noqa: E402
from autocast_explorer.core.hardware.midr import midr_name  # noqa: E402

MODELS = (
    "neoverse-n1",
    "max,sve-max-vq=2",
    "max,sve=off",
    "max",
    "max,sve-max-vq=2,sme=off",
    "max,sme=off",
)
ABOUT = {
    "neoverse-n1": "no bf16 (Graviton2-like)",
    "max,sve-max-vq=2": "bf16 + 256-bit SVE, and SME (V1-like, but a V1 has no SME)",
    "max,sve=off": "bf16 + i8mm, no SVE (M2-like)",
    "max": "bf16, SVE 512, SVE2, SME",
    # qemu 7.2 kills the LSTM under bf16 autocast with SIGILL on every model that advertises
    # SME; the same models without SME show what torch does there (a V1 has no SME).
    "max,sve-max-vq=2,sme=off": "bf16 + 256-bit SVE, no SME (closest to a V1 / Graviton3)",
    "max,sme=off": "bf16, SVE 512, SVE2, no SME",
}
TORCH = ("2.13.0", "2.10.0")
FAMILIES = ("mlp", "cnn", "transformer", "lstm", "gru")
#: Module kinds whose op the AMP docs' CPU list puts in the lower dtype (linear, conv2d,
#: mkldnn_rnn_layer): float32 out of one of these under bf16 autocast is a silent fallback.
LOWER_KINDS = frozenset({"Linear", "Conv2d", "LSTM"})
SECTION = "## Arm under emulation (`bench/arm_matrix.py`)"
X86_WORDS = re.compile(r"\b(AMX|AVX|amx_|avx)", re.IGNORECASE)


def model_prefix(arm: Path, model: str) -> Path:
    """A qemu -L prefix of this CPU model's own: the recipe's rootfs linked in, except /proc
    and /sys, which hold this model's fake cpuinfo and MIDR (written by the recipe's
    gen_cpuinfo.py under the same QEMU_CPU). Models can then run side by side."""
    prefix = Path(tempfile.gettempdir()) / f"arm-prefix-{re.sub(r'[^a-z0-9]+', '-', model)}"
    prefix.mkdir(exist_ok=True)
    for entry in (arm / "rootfs").iterdir():
        link = prefix / entry.name
        if entry.name not in ("proc", "sys") and not link.exists():
            link.symlink_to(entry)
    python3 = arm / "rootfs" / "usr" / "bin" / "python3"
    subprocess.run(
        ["qemu-aarch64-static", "-L", str(prefix), str(python3), str(arm / "gen_cpuinfo.py"),
         str(prefix), str(os.cpu_count() or 1)],
        env={**os.environ, "QEMU_CPU": model}, check=True, capture_output=True,
    )  # fmt: skip
    return prefix


#: What the explorer's core needs beyond torch and numpy (the recipe installs only those):
#: pure-Python wheels plus pydantic-core's aarch64 one, at the versions constraints.txt pins.
CORE_DEPENDENCIES = ("pydantic", "pydantic-core", "annotated-types", "typing-inspection")


def ensure_dependencies(arm: Path, torch_version: str) -> None:
    """Install CORE_DEPENDENCIES into the emulated venv when they are missing: aarch64 wheels
    downloaded by this machine's pip, installed by the venv's own (emulated) pip, offline."""
    venv = arm / "rootfs" / "opt" / f"venv-{torch_version}"
    if any(venv.glob("lib/python3*/site-packages/pydantic_core")):
        return
    pins = re.findall(r"^(?:pydantic|pydantic-core|annotated-types|typing-inspection)==\S+",
                      (ROOT / "constraints.txt").read_text(), re.MULTILINE)  # fmt: skip
    if len(pins) != len(CORE_DEPENDENCIES):
        raise SystemExit(f"constraints.txt pins {pins}, expected {CORE_DEPENDENCIES}")
    wheels = Path(tempfile.mkdtemp(prefix="arm-wheels-"))
    print(f"installing {', '.join(pins)} into {venv}", file=sys.stderr, flush=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
         "--python-version", "3.11", "--implementation", "cp", "--platform",
         "manylinux2014_aarch64", "--platform", "manylinux_2_17_aarch64", "--dest", str(wheels),
         *pins],
        check=True,
    )  # fmt: skip
    pip = next((arm / "rootfs" / "usr" / "share" / "python-wheels").glob("pip-*.whl"))
    subprocess.run(
        ["qemu-aarch64-static", "-L", str(arm / "rootfs"), str(venv / "bin" / "python"),
         f"{pip}/pip", "install", "--quiet", "--no-index", "--no-deps", "--no-compile",
         "--force-reinstall",
         *map(str, sorted(wheels.glob("*.whl")))],
        check=True,
    )  # fmt: skip


def run_cell(
    arm: Path, model: str, torch_version: str, out: Path, families: str, *extra: str
) -> dict:
    """Run arm_cell.py in the emulated Python for one CPU model and torch version."""
    env = {**os.environ, "QEMU_CPU": model, "PYTHONPATH": str(ROOT)}
    env.pop("AUTOCAST_EXPLORER_CPU_FLAGS", None)
    python = arm / "rootfs" / "opt" / f"venv-{torch_version}" / "bin" / "python"
    cmd = ["qemu-aarch64-static", "-L", str(model_prefix(arm, model)), str(python)]
    cmd += [str(ROOT / "bench" / "arm_cell.py"), "--out", str(out), "--families", families]
    cmd += list(extra)
    start = time.monotonic()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd="/tmp")
    if done.returncode != 0 or not out.is_file():
        return {"crash": (done.stderr or done.stdout)[-1500:], "seconds": time.monotonic() - start}
    cell = json.loads(out.read_text())
    cell["seconds"] = time.monotonic() - start
    return cell


# ---- the checks --------------------------------------------------------------------------
def torch_flags(caps: dict) -> tuple[frozenset[str], str]:
    """The flags torch (or, without get_capabilities, /proc/cpuinfo) reports, and which."""
    if caps.get("get_capabilities") is not None:
        return normalize(caps["get_capabilities"]), "get_capabilities"
    features = caps.get("cpuinfo", {}).get("Features", "")
    return frozenset(features.split()), "cpuinfo Features"


def check_capabilities(cell: dict, runs: dict) -> list[str]:
    caps = cell["capabilities"]
    flags, _ = torch_flags(caps)
    info = caps.get("cpuinfo", {})
    expected_name = midr_name(info.get("CPU implementer", ""), info.get("CPU part", ""))
    problems = []
    for family, run in runs.items():
        env = (run.get("json") or {}).get("environment")
        if env is None:
            problems.append(f"{family}: no result")
            continue
        if env["native_bf16"] != ("bf16" in flags):
            problems.append(f"{family}: native_bf16 {env['native_bf16']}, torch's flags disagree")
        wanted = {f for f in LOW_PRECISION_FLAGS if f in flags}
        if set(env["cpu_flags"]) != wanted:
            problems.append(f"{family}: flags {sorted(env['cpu_flags'])} vs torch {sorted(wanted)}")
        if env["cpu_model"].strip().lower() in ("", "unknown") or (
            expected_name and env["cpu_model"] != expected_name
        ):
            problems.append(
                f"{family}: CPU named {env['cpu_model']!r}, MIDR says {expected_name!r}"
            )
    return sorted(set(problems))


def layer_kinds(doc: dict) -> dict[str, set[str]]:
    kinds: dict[str, set[str]] = {}
    for layer in doc.get("layers", []):
        auto = layer.get("autocast")
        if auto is not None:
            kinds.setdefault(layer["kind"], set()).add(auto["out"])
    return kinds


def check_dtypes(cell: dict, runs: dict) -> list[str]:
    problems = []
    for family, run in runs.items():
        direct, doc = cell["direct"][family], run.get("json") or {}
        if bool(direct["error"]) != bool(doc.get("autocast_error")):
            problems.append(f"{family}: torch raised {bool(direct['error'])}, explorer says "
                            f"{bool(doc.get('autocast_error'))}")  # fmt: skip
            continue
        seen = layer_kinds(doc)
        for kind, dtype in direct["dtypes"].items():
            if kind in seen and seen[kind] != {dtype}:
                problems.append(f"{family}: {kind} {sorted(seen[kind])} vs torch {dtype}")
    return problems


def silent_expected(direct: dict) -> bool:
    return not direct["error"] and any(
        kind in LOWER_KINDS and dtype == "float32" for kind, dtype in direct["dtypes"].items()
    )


def check_findings(cell: dict, runs: dict) -> list[str]:
    problems = []
    for family, run in runs.items():
        direct, text = cell["direct"][family], run.get("text", "")
        raised = "could not run this model here" in text
        silent = "silently kept" in text
        if raised != bool(direct["error"]):
            problems.append(f"{family}: 'could not run' finding {raised}, torch raised "
                            f"{bool(direct['error'])}")  # fmt: skip
        if silent != silent_expected(direct):
            problems.append(f"{family}: silent-float32 finding {silent}, expected "
                            f"{silent_expected(direct)}")  # fmt: skip
    return problems


def check_verdict(cell: dict, runs: dict) -> list[str]:
    flags, _ = torch_flags(cell["capabilities"])
    problems = []
    for family, run in runs.items():
        line = next((x for x in run.get("text", "").splitlines() if x.startswith("Verdict:")), "")
        if not line:
            problems.append(f"{family}: no verdict")
            continue
        says_native = "has native bfloat16" in line
        if says_native != ("bf16" in flags):
            problems.append(f"{family}: verdict says native {says_native}")
        if X86_WORDS.search(run.get("text", "")):
            problems.append(f"{family}: x86 words in the Arm summary")
    return problems


def check_ops(cell: dict) -> list[str]:
    run = cell["explorer"].get("ops")
    if run is None:
        return ["not run"]
    if "crash" in run:
        return [f"explorer's op probe: {run['crash']}"]
    doc = run.get("json") or {}
    by_name = {op["name"]: op for op in doc.get("ops", [])}
    problems = []
    for name, direct in cell["direct_ops"].items():
        case = by_name.get(name, {}).get("cases", {}).get("float32")
        if case is None:
            problems.append(f"{name}: not probed")
            continue
        mine = f"error: {case['error']}" if case.get("error") else case["out"]
        if mine.startswith("error") != direct.startswith("error") or (
            not direct.startswith("error") and mine != direct
        ):
            problems.append(f"{name}: explorer {mine[:60]} vs torch {direct[:60]}")
    return problems


def crashed(cell: dict, family: str) -> str:
    """'' or what killed the family's direct probe or explorer run (qemu's SIGILL, …)."""
    direct, run = cell["direct"].get(family, {}), cell["explorer"].get(family, {})
    said = [f"torch: {direct['crash']}"] if "crash" in direct else []
    if "crash" in run:
        said.append(f"explorer: {run['crash']}")
    elif run.get("code") != 0:
        said.append(f"explorer exit {run.get('code')}: {run.get('stderr', '')[-200:]}")
    return "; ".join(said)


def judge(cell: dict) -> dict:
    runs = {k: v for k, v in cell["explorer"].items() if k != "ops"}
    ok_runs = {k: v for k, v in runs.items() if not crashed(cell, k)}
    return {
        "crashed": [f"{k}: {crashed(cell, k)}" for k in runs if crashed(cell, k)],
        "capabilities": check_capabilities(cell, ok_runs),
        "dtypes": check_dtypes(cell, ok_runs),
        "findings": check_findings(cell, ok_runs),
        "verdict": check_verdict(cell, ok_runs),
        "ops": check_ops(cell),
    }


# ---- the table ---------------------------------------------------------------------------
def family_cell(cell: dict, family: str) -> str:
    """'LSTM float32 · silent' / 'LSTM raised' / 'Linear bfloat16'."""
    run = cell["explorer"].get(family, {})
    doc = run.get("json") or {}
    if crashed(cell, family):
        return "killed (" + ", ".join(re.findall(r"SIG[A-Z]+", crashed(cell, family))) + ")"
    if doc.get("autocast_error"):
        return "raised (finding)"
    main = {"mlp": "Linear", "cnn": "Conv2d", "transformer": "TransformerEncoderLayer",
            "lstm": "LSTM", "gru": "GRU"}[family]  # fmt: skip
    dtypes = sorted(layer_kinds(doc).get(main, {"?"}))
    text = "/".join(d.replace("bfloat16", "bf16").replace("float32", "fp32") for d in dtypes)
    if "silently kept" in run.get("text", ""):
        text += " (silent-fp32 finding)"
    return text


def markdown(cells: list[tuple[str, str, dict, dict]], host: str) -> str:
    when = datetime.date.today().isoformat()
    lines = [
        SECTION,
        "",
        "Behaviour only, never timings: qemu-aarch64-static user-mode emulation (../shared/arm), "
        "tiny configs, `--min-time 0.05 --threads 1`. Each cell compares what the explorer "
        "says with what torch itself does (bench/arm_matrix.py's docstring says how); "
        "'agree' means every check held for every family.",
        "",
        f"Host: {host}; {when}.",
        "",
        "| torch | QEMU_CPU | CPU named | native bf16 | capabilities | dtypes | findings | "
        "verdict | ops | MLP | CNN | transformer | LSTM | GRU |",
        "|" + " --- |" * 14,
    ]
    notes = []
    for torch_version, model, cell, verdict in cells:
        if "crash" in cell:
            lines.append(f"| {torch_version} | `{model}` | cell crashed |" + " |" * 12)
            notes.append(f"- {torch_version} `{model}`: {cell['crash'][-300:]}")
            continue
        env = next(
            ((r.get("json") or {}).get("environment") for r in cell["explorer"].values()
             if (r.get("json") or {}).get("environment")), {}
        )  # fmt: skip
        flags, source = torch_flags(cell["capabilities"])
        native = f"{'yes' if env.get('native_bf16') else 'no'} (torch: " + (
            f"{'yes' if 'bf16' in flags else 'no'}, {source})"
        )
        checks = [
            "agree" if not verdict[k] else "**DISAGREE**"
            for k in ("capabilities", "dtypes", "findings", "verdict", "ops")
        ]
        fams = [family_cell(cell, f) if f in cell["explorer"] else "-" for f in FAMILIES]
        lines.append(
            f"| {torch_version} | `{model}` | {env.get('cpu_model', '?')} | {native} | "
            + " | ".join(checks + fams)
            + " |"
        )
        for key, problems in verdict.items():
            for problem in problems:
                notes.append(f"- {torch_version} `{model}` {key}: {problem}")
        for family, direct in cell["direct"].items():
            if "crash" in direct:
                notes.append(f"- {torch_version} `{model}` {family}, torch was {direct['crash']}")
                continue
            if direct["warnings"]:
                notes.append(f"- {torch_version} `{model}` {family}, torch warned: "
                             f"{'; '.join(w[:160] for w in direct['warnings'])}")  # fmt: skip
            if direct["error"]:
                notes.append(f"- {torch_version} `{model}` {family}, torch raised: "
                             f"{direct['error'][:160]}")  # fmt: skip
    lines += ["", "CPU models: " + "; ".join(f"`{m}` {a}" for m, a in ABOUT.items()) + "."]
    if notes:
        lines += ["", "What torch said, and every disagreement:", "", *notes]
    return "\n".join(lines) + "\n"


def write_section(results: Path, text: str) -> None:
    old = results.read_text() if results.is_file() else "# Bench results\n"
    start = old.find(SECTION)
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + text
    else:
        end = old.find("\n## ", start + len(SECTION))
        new = old[:start] + text + (old[end + 1 :] if end >= 0 else "")
    results.write_text(new)


def write_fixtures(cells: list[tuple[str, str, dict, dict]], path: Path) -> None:
    """Store what torch and the kernel reported on each CPU model as the hardware-matrix
    tests' fixtures (tests/core/arm_capabilities.json), merged into what is there."""
    data = json.loads(path.read_text()) if path.is_file() else {}
    data["captured"] = (
        "../shared/arm/recipe.sh (qemu-aarch64-static user mode, Debian 12 arm64) + "
        "bench/arm_cell.py, by bench/arm_matrix.py --fixtures"
    )
    kinds = data.setdefault("kinds", {})
    for version, model, cell, _ in cells:
        if "crash" in cell:
            continue
        caps = cell["capabilities"]
        info = caps.get("cpuinfo", {})
        kind = kinds.setdefault(model, {"about": ABOUT.get(model, ""), "torch": {}})
        kind["cpuinfo"] = {k: info.get(k, "") for k in ("Features", "CPU implementer", "CPU part")}
        if "sve_vector_bits" in caps:
            kind["sve_vector_bits"] = caps["sve_vector_bits"]
        kind["torch"][version] = {
            "get_capabilities": caps.get("get_capabilities"),
            "mkldnn_bf16": caps.get("mkldnn_bf16"),
            "cpu_capability": caps.get("cpu_capability"),
        }
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_arm = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "arm-emu"
    parser.add_argument("--arm", type=Path, default=default_arm, help="the recipe's folder")
    parser.add_argument("--models", default=",".join(MODELS), help="QEMU_CPU models, ';'-separated")
    parser.add_argument("--torch", default=",".join(TORCH), help="torch versions (recipe venvs)")
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--raw", type=Path, default=Path("/tmp/arm_matrix"), help="raw cells")
    parser.add_argument("--results", type=Path, default=ROOT / "bench" / "RESULTS.md")
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    parser.add_argument("--reuse", action="store_true", help="take cells already in --raw")
    parser.add_argument(
        "--fixtures",
        type=Path,
        default=None,
        help="also store the captured capabilities here (tests/core/arm_capabilities.json)",
    )
    args = parser.parse_args()
    models = args.models.split(";") if ";" in args.models else _split_models(args.models)
    args.raw.mkdir(parents=True, exist_ok=True)
    cells = []
    for model in models:
        for version in args.torch.split(","):
            if not (args.arm / "rootfs" / "opt" / f"venv-{version}").is_dir():
                print(f"skip torch {version}: no venv (run the recipe)", file=sys.stderr)
                continue
            ensure_dependencies(args.arm, version)
            out = args.raw / f"{version}-{model.replace(',', '_').replace('=', '')}.json"
            print(f"== {version} {model}", file=sys.stderr, flush=True)
            if args.reuse and out.is_file():
                cell = {**json.loads(out.read_text()), "seconds": 0.0}
            else:
                cell = run_cell(args.arm, model, version, out, args.families)
            redone = out.with_suffix(".direct.json")  # torch's side redone (--direct-only)
            if "crash" not in cell and redone.is_file():
                again = json.loads(redone.read_text())
                cell["direct"], cell["direct_ops"] = again["direct"], again["direct_ops"]
            ops = out.with_suffix(".ops.json")  # the op probe redone (--families '')
            if "crash" not in cell and ops.is_file():
                cell["explorer"]["ops"] = json.loads(ops.read_text())["explorer"]["ops"]
            verdict = judge(cell) if "crash" not in cell else {}
            print(f"   {round(cell['seconds'])} s: {verdict}", file=sys.stderr, flush=True)
            cells.append((version, model, cell, verdict))
    host = f"{os.uname().machine} host, qemu-aarch64-static " + _qemu_version()
    text = markdown(cells, host)
    done = {(version, model) for version, model, _, _ in cells}
    missing = [f"`{m}` × {v}" for m in MODELS for v in TORCH if (v, m) not in done]
    if missing:
        text += (
            f"\nNot in this table (not run): {', '.join(missing)}. "
            "`bench/arm_matrix.py` with no options runs every cell.\n"
        )
    print(text)
    if not args.no_write:
        write_section(args.results, text)
    if args.fixtures is not None:
        done = {(version, model) for version, model, _, _ in cells}
        for model in MODELS:  # capabilities-only cells (arm_cell.py --capabilities-only)
            for version in TORCH:
                caps = args.raw / f"caps-{version}-{model.replace(',', '_').replace('=', '')}.json"
                if (version, model) not in done and caps.is_file():
                    cells.append((version, model, json.loads(caps.read_text()), {}))
        write_fixtures(cells, args.fixtures)
    return 0


def _split_models(text: str) -> list[str]:
    """'neoverse-n1,max,sve-max-vq=2,max' → models; a part with '=' or 'sve' is a property."""
    models: list[str] = []
    for part in text.split(","):
        if models and ("=" in part or part.startswith("sve")):
            models[-1] += f",{part}"
        else:
            models.append(part)
    return models


def _qemu_version() -> str:
    try:
        out = subprocess.run(["qemu-aarch64-static", "--version"], capture_output=True, text=True)
        return out.stdout.split("\n")[0].split("version")[-1].strip()
    except OSError:
        return "?"


if __name__ == "__main__":
    sys.exit(main())

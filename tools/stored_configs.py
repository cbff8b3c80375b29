"""`python -m tools.stored_configs COMMIT [--preset NAME] [-- RUN FLAGS…]`: store the configs a
past version of the explorer wrote, for tests/core/test_stored_configs.py to read today.

The commit's tree is unpacked (git archive) into a temporary folder and its own code writes,
with its own Python imports: ExperimentConfig().to_dict() and a few configs that set the fields
that version had (`configs`), a built-in preset as it saved presets (`preset`, with --preset),
and the `config` section of the result document a tiny run of its command line wrote
(`result`, with run flags after `--`). The file is tests/data/configs/DATE-COMMIT.json. Add
one whenever the config's fields or their JSON change.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "configs"

#: Run inside the old tree: the configs it writes, each field set only where that version has it.
CONFIGS = r"""
import dataclasses, importlib, json
try:
    importlib.import_module("autocast_explorer.core.experiment")
    config = importlib.import_module("autocast_explorer.core.experiment.config")
except ModuleNotFoundError:
    config = importlib.import_module("autocast_explorer.core.config")
C = config.ExperimentConfig
names = {f.name for f in dataclasses.fields(C)}
def made(**fields):
    return C(**{k: v for k, v in fields.items() if k in names}).to_dict()
out = {"default": C().to_dict(), "custom": made(
    widths=(64, 32, 10), batch=16, seed=3, dtype="float16", threads=1, activation="gelu",
    head="softmax", atol=0.1, rtol=0.001, topk=3, input_scale=2.0,
    input_distribution="uniform", min_time=0.25, allow_slow=True, memory_budget_mb=512.0,
    max_time=2.0, routes=("eager", "implicit"), keep_float32=("fc1", "Linear"))}
if "mode" in names:
    out["train"] = made(mode="train", steps=20, lr=0.01, optimizer="adamw", scaler=False,
                        dtype="float16")
if "model" in names:
    out["cnn"] = made(model="cnn", channels=(1, 8, 16), image=16, classes=4, batch=8)
    out["rnn"] = made(model="rnn", cell="gru", seq=12, features=6, hidden=20, depth=1)
    out["transformer"] = made(model="transformer", d_model=32, heads=2, seq=8, depth=1, ff=64,
                              fast_path=False)
if "model_args" in names:
    out["user"] = made(model="hf:bert", model_args={"num_hidden_layers": 1, "hidden_size": 32},
                       input_kind="tokens", vocab=100, seq=8, layer_depth=2)
if "data" in names:
    out["digits"] = made(model="cnn", channels=(1, 8), image=8, data="digits", epochs=3)
print(json.dumps(out))
"""
#: Run inside the old tree: a built-in preset (sys.argv[1]) as that version saves presets.
PRESET = r"""
import glob, importlib, json, sys
try:
    importlib.import_module("autocast_explorer.core.experiment")
except ModuleNotFoundError:
    pass
for name in ("autocast_explorer.core.learning.presets", "autocast_explorer.core.presets"):
    try:
        presets = importlib.import_module(name)
        break
    except ModuleNotFoundError:
        continue
path = [p for p in glob.glob(f"**/presets/{sys.argv[1]}.json", recursive=True)
        if not p.startswith("tests")][0]
print(json.dumps(presets.load_preset(path, builtin=True).to_dict()))
"""


def _python(tree: Path, *args: str) -> str:
    """Run this interpreter in `tree` with the tree's own package first on the path."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.exit(f"error: {' '.join(args[:3])} failed in {tree.name}:\n{done.stderr[-2000:]}")
    return done.stdout


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def stored(commit: str, preset: str | None, run: list[str]) -> dict[str, Any]:
    """What `commit`'s code writes: its configs, a preset, a run's result config."""
    short = _git("rev-parse", "--short=7", commit)
    date = _git("log", "-1", "--format=%ad", "--date=short", short)
    data: dict[str, Any] = {
        "commit": short,
        "date": date,
        "subject": _git("log", "-1", "--format=%s", short)[:160],
    }
    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", short], capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
        data["configs"] = json.loads(_python(tree, "-c", CONFIGS))
        if preset:
            data["preset"] = json.loads(_python(tree, "-c", PRESET, preset))
        if run:
            out = tree / "result.json"
            _python(tree, "-m", "autocast_explorer", "run", *run, "--json", str(out))
            document = json.loads(out.read_text(encoding="utf-8"))
            data["result"] = {"schema": document["schema"], "config": document["config"]}
    return data


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ours, run = (
        (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    )
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("commit")
    parser.add_argument("--preset", help="a built-in preset of that version to save")
    args = parser.parse_args(ours)
    data = stored(args.commit, args.preset, run)
    path = OUT / f"{data['date']}-{data['commit']}.json"
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

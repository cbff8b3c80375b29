"""Import cost of the typed-model libraries for documents (pydantic v2, msgspec) vs `import torch`.

Each round runs, in a fresh interpreter and in rotating order: `import torch`; pydantic
imported plus one small model defined and validated (what a document reader pays the first
time); the same with msgspec; and a bare interpreter (subtracted from each). The figure is the
median over rounds of library/torch, so a busy machine shifts both sides of a ratio alike.

    .venv/bin/python bench/document_libs.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time

SNIPPETS = {
    "bare": "pass",
    "torch": "import torch",
    "pydantic": (
        "from pydantic import BaseModel, Field\n"
        "class Latency(BaseModel):\n"
        "    median_ms: float = Field(ge=0)\n"
        "    samples: int = Field(ge=0)\n"
        "Latency.model_validate({'median_ms': 1.5, 'samples': 3})\n"
        "Latency.model_json_schema()\n"
    ),
    "msgspec": (
        "from typing import Annotated\n"
        "import msgspec\n"
        "class Latency(msgspec.Struct):\n"
        "    median_ms: Annotated[float, msgspec.Meta(ge=0)]\n"
        "    samples: Annotated[int, msgspec.Meta(ge=0)]\n"
        "msgspec.convert({'median_ms': 1.5, 'samples': 3}, Latency)\n"
        "msgspec.json.schema(Latency)\n"
    ),
}


def spawn(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(argv)
    names = [n for n in SNIPPETS if n in ("bare", "torch") or importlib.util.find_spec(n)]
    missing = sorted(set(SNIPPETS) - set(names))
    if missing:
        print(f"not installed (skipped): {', '.join(missing)}")
    ratios: dict[str, list[float]] = {n: [] for n in names if n not in ("bare", "torch")}
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(args.rounds):
        order = names[round_ % len(names) :] + names[: round_ % len(names)]
        took = {name: spawn(SNIPPETS[name]) for name in order}
        for name in names:
            seconds[name].append(took[name])
        torch_cost = took["torch"] - took["bare"]
        for lib in ratios:
            ratios[lib].append((took[lib] - took["bare"]) / torch_cost)
    print(f"rounds: {args.rounds}; python {sys.version.split()[0]}")
    for name in names:
        print(f"{name:>9}: median {statistics.median(seconds[name]):.3f} s (whole process)")
    for lib, values in ratios.items():
        low, high = min(values), max(values)
        print(
            f"{lib:>9} / torch (bare interpreter subtracted): median "
            f"{statistics.median(values):.3f}× (range {low:.3f}–{high:.3f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Write the published JSON Schemas (draft 2020-12) into resources/schemas/.

The schemas are package data that other tools read, so they are plain JSON files. Each is
generated from its document's one typed definition (core/documents/model.py: ExperimentResult
in core/experiment/result.py, SweepResult in core/sweeps/result.py, ProbeResult in
core/numerics/opresult.py, Preset in core/learning/presets.py, each made of parts) and
self-contained (shared parts in `$defs`), the config's part from ExperimentConfig
(core/experiment/config_schema.py). This script only writes them.

    python tools/write_schemas.py           # rewrite the files
    python tools/write_schemas.py --check   # exit 1 if a file differs (the test suite runs this)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout's package, also when run as a plain script

# The checkout's package, imported after the path is set (E402).
from autocast_explorer.core.experiment.result import result_schema  # noqa: E402
from autocast_explorer.core.learning.presets import preset_schema  # noqa: E402
from autocast_explorer.core.numerics.opresult import probe_schema  # noqa: E402
from autocast_explorer.core.planning.document import plan_schema  # noqa: E402
from autocast_explorer.core.sweeps.placements import EXTRAS_KEY, PlacementReport  # noqa: E402
from autocast_explorer.core.sweeps.result import sweep_schema  # noqa: E402

OUT = ROOT / "resources" / "schemas"

Schema = dict[str, Any]


def result_with_sections() -> Schema:
    """The result with the sections layers above it add (run --placements)."""
    return result_schema(sections={EXTRAS_KEY: PlacementReport})


SCHEMAS = {
    "result.schema.json": result_with_sections,
    "sweep.schema.json": sweep_schema,
    "ops.schema.json": probe_schema,
    "preset.schema.json": preset_schema,
    "plan.schema.json": plan_schema,
}


def render(build: Any) -> str:
    return json.dumps(build(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 on a difference")
    args = parser.parse_args(argv)
    stale = []
    for name, build in SCHEMAS.items():
        path = OUT / name
        wanted = render(build)
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == wanted:
            continue
        stale.append(name)
        if not args.check:
            OUT.mkdir(parents=True, exist_ok=True)
            path.write_text(wanted, encoding="utf-8")
    if args.check and stale:
        print(f"out of date: {', '.join(stale)} (run python tools/write_schemas.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Training-mode bench: time per training step and bytes saved for backward, float32 vs autocast.

(Not part of the test suite.) For each model, `ROUNDS` training runs through the engine
(`mode="train"`, 1 thread): each run times both modes' steps in alternating blocks, so the
speedup of a round is a side-by-side ratio; figures are medians over rounds. Also checks that
the phase split (forward / backward / optimizer, timed inside each step) adds up to the step
time measured by the protocol. Prints a Markdown block for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import statistics

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.hardware.cpu import environment

ROUNDS = 3
MODELS = (
    ((256, 256, 256, 10), 128),  # the tutorial's MLP
    ((256, 1024, 1024, 10), 256),  # large activations
)


def one_model(widths: tuple[int, ...], batch: int, dtype: str, min_time: float) -> list[str]:
    rows = []
    for _ in range(ROUNDS):
        config = ExperimentConfig(
            widths=widths, batch=batch, dtype=dtype, threads=1, mode="train", min_time=min_time
        )
        rows.append(run_experiment(config))
    med = statistics.median
    plain = med(r.plain.median_ms for r in rows)
    auto = med(r.autocast.median_ms for r in rows)
    ratios = [r.speedup for r in rows]
    train = rows[0].train
    assert train is not None
    phase_sum = {
        mode: med(
            r.train.phases[mode].forward_ms
            + r.train.phases[mode].backward_ms
            + r.train.phases[mode].optimizer_ms
            for r in rows
        )
        for mode in ("plain", "autocast")
    }
    name = f"{'→'.join(map(str, widths))}, batch {batch}, {dtype}"
    return [
        f"| {name} | {plain:.3f} | {auto:.3f} | {med(ratios):.2f}× "
        f"({', '.join(f'{x:.2f}' for x in ratios)}) | {phase_sum['plain']:.3f} / "
        f"{phase_sum['autocast']:.3f} | {train.saved_bytes['plain']:,} | "
        f"{train.saved_bytes['autocast']:,} ({train.saved_ratio:.2f}) | "
        f"{train.loss['plain'][-1]:.3f} / {train.loss['autocast'][-1]:.3f} |"
    ]


def main() -> None:
    parser = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    parser.add_argument("--min-time", type=float, default=1.0)
    args = parser.parse_args()
    env = environment(1)
    load = os.getloadavg()
    print(
        f"Machine: {env.cpu_model}, {env.cores} cores, flags {' '.join(env.cpu_flags)}; torch "
        f"{env.torch_version}, 1 thread; {_dt.date.today()}; load average {load[0]:.1f} at start."
    )
    print()
    print(
        "| model | float32 step ms | autocast step ms | speedup (rounds) | "
        "phase sum ms f32 / ac | saved f32 bytes | saved autocast bytes (ratio) | "
        "final loss f32 / ac |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for widths, batch in MODELS:
        for dtype in ("bfloat16", "float16"):
            for line in one_model(widths, batch, dtype, args.min_time):
                print(line, flush=True)
    print()
    print(f"Load average at end: {os.getloadavg()[0]:.1f}.")


if __name__ == "__main__":
    main()

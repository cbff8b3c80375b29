"""What the Hardware tab's verdict rests on: the latest sweep, else the last run, else the flags.

Each source gives the same things (core's verdict and roofline, a sentence naming the source,
the dtype), so the tab shows one `Basis` whichever it came from.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.result import ExperimentResult
    from autocast_explorer.core.experiment.timing import LatencyStats
    from autocast_explorer.core.hardware.cpu import Environment
    from autocast_explorer.core.hardware.onednn import OneDnnProbe
    from autocast_explorer.core.sweeps.result import SweepResult
    from autocast_explorer.core.sweeps.roofline import Roofline
    from autocast_explorer.core.sweeps.verdict import HardwareVerdict


@dataclass(frozen=True)
class Basis:
    """One source's verdict and roofline; `kind` is 'sweep', 'run' or 'flags'."""

    kind: str
    verdict: HardwareVerdict
    roofline: Roofline
    #: Which measurement the verdict is built from, in a sentence.
    sentence: str
    #: The roofline's legend for the measured points.
    source: str
    dtype: str


def sweep_basis(sweep: SweepResult) -> Basis:
    """The latest sweep's own verdict and roofline."""
    what = "batch × width grid" if sweep.is_grid else sweep.spec.param
    return Basis(
        "sweep",
        sweep.verdict,
        sweep.roofline,
        f"From the CPU flags and the latest sweep ({what}, {len(sweep.points)} points, "
        f"{_when(sweep.created)}).",
        f"latest sweep: {len(sweep.points)} points per mode",
        sweep.config.dtype,
    )


def run_basis(run: ExperimentResult, measured: LatencyStats, probe: OneDnnProbe | None) -> Basis:
    """One point from the last single run (`measured`: its autocast mode); `probe` only if
    it asked oneDNN about the same dtype."""
    from autocast_explorer.core.sweeps.roofline import build_roofline_from_work, family_bytes_moved
    from autocast_explorer.core.sweeps.verdict import single_run_verdict

    cfg = run.config
    verdict = single_run_verdict(
        run.environment,
        cfg.dtype,
        cfg.batch,
        run.speedup,
        rates=(run.gflops("plain"), run.gflops("autocast")),
        onednn=probe if probe and probe.dtype == cfg.dtype else None,
        too_noisy=run.speed_call.too_noisy,
    )
    roofline = build_roofline_from_work(
        cfg.dtype,
        run.environment.threads,
        [
            (
                cfg.batch,
                run.flops,
                family_bytes_moved(cfg, None),
                family_bytes_moved(cfg, cfg.dtype),
                run.plain.gflops(run.flops),
                measured.gflops(run.flops),
            )
        ],
    )
    return Basis(
        "run",
        verdict,
        roofline,
        f"From the CPU flags and the last single run (batch {cfg.batch}, "
        f"{cfg.title}); run a sweep for the whole picture.",
        f"last run: batch {cfg.batch}",
        cfg.dtype,
    )


def flags_basis(env: Environment, dtype: str) -> Basis:
    """Nothing measured yet: what the CPU flags alone say, and an empty roofline."""
    from autocast_explorer.core.sweeps.roofline import build_roofline
    from autocast_explorer.core.sweeps.verdict import flags_verdict

    return Basis(
        "flags",
        flags_verdict(env, dtype),
        build_roofline(dtype, env.threads, []),
        "From the CPU flags only: nothing measured yet.",
        "nothing measured yet",
        dtype,
    )


def _when(created: str) -> str:
    try:
        moment = _dt.datetime.fromisoformat(created).astimezone()
    except ValueError:
        return created or "time unknown"
    return f"finished {moment:%H:%M:%S}"

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
    #: Why the roofline has no point although something was measured ('' : the chart's own).
    unplaced: str = ""


def sweep_basis(sweep: SweepResult) -> Basis:
    """The latest sweep's own verdict and roofline."""
    what = "batch × width grid" if sweep.is_grid else sweep.spec.param
    count = len(sweep.points)
    placed = sum(1 for p in sweep.roofline.points if p.mode == "plain")  # the trusted ones
    return Basis(
        "sweep",
        sweep.verdict,
        sweep.roofline,
        f"From the CPU flags and the latest sweep ({what}, {count} points, "
        f"{_when(sweep.created)}).",
        _sweep_source(placed, count),
        sweep.config.dtype,
        "" if placed else f"No point to place: all {count} of the sweep's were too noisy to tell",
    )


def _sweep_source(placed: int, count: int) -> str:
    """The roofline's legend for a sweep of `count` points, `placed` of them trusted."""
    if placed == count:
        return f"latest sweep: {count} points per mode"
    if placed == 0:
        return "latest sweep: every point too noisy to place"
    return f"latest sweep: {placed} of {count} points per mode (the rest too noisy)"


def run_basis(
    run: ExperimentResult,
    measured: LatencyStats,
    probe: OneDnnProbe | None,
    trusted: ExperimentResult | None = None,
) -> Basis:
    """The last single run's call (`measured`: its autocast mode); `probe` only if it asked
    oneDNN about the same dtype. GFLOP/s and the roofline's point come from `trusted`, the
    latest run whose call was not too noisy (this one, or an earlier one, named); none when
    there is none."""
    from autocast_explorer.core.sweeps.roofline import build_roofline_from_work, family_bytes_moved
    from autocast_explorer.core.sweeps.verdict import single_run_verdict

    cfg = run.config
    call = run.speed_call
    if trusted is not None and (trusted.autocast is None or trusted.speed_call.too_noisy):
        trusted = None
    if trusted is None and not call.too_noisy:
        trusted = run
    verdict = single_run_verdict(
        run.environment,
        cfg.dtype,
        cfg.batch,
        run.speedup,
        rates=None if trusted is None else (trusted.gflops("plain"), trusted.gflops("autocast")),
        onednn=probe if probe and probe.dtype == cfg.dtype else None,
        too_noisy=call.too_noisy,
        call=call,
    )
    work = []
    if trusted is not None and trusted.autocast is not None:
        tcfg = trusted.config
        work.append(
            (
                tcfg.batch,
                trusted.flops,
                family_bytes_moved(tcfg, None),
                family_bytes_moved(tcfg, tcfg.dtype),
                trusted.gflops("plain"),
                trusted.gflops("autocast"),
            )
        )
    roofline = build_roofline_from_work(cfg.dtype, run.environment.threads, work)
    return Basis(
        "run",
        verdict,
        roofline,
        f"From the CPU flags and the last single run (batch {cfg.batch}, "
        f"{cfg.title}){_rates_source(run, trusted)}; run a sweep for the whole picture.",
        f"last run: batch {cfg.batch}" if trusted is run else _source(trusted),
        cfg.dtype,
        "" if work else "No point to place: no run could tell which mode was faster",
    )


def _rates_source(run: ExperimentResult, trusted: ExperimentResult | None) -> str:
    """Which run the GFLOP/s come from, when it is not simply the last one."""
    if trusted is None:
        return "; no GFLOP/s: it was too noisy to tell, and no earlier run could tell"
    if trusted is run:
        return ""
    return (
        f"; it was too noisy to tell, so the GFLOP/s are from the run "
        f"{_when(trusted.created)} (batch {trusted.config.batch}, {trusted.config.title})"
    )


def _source(trusted: ExperimentResult | None) -> str:
    if trusted is None:
        return "no run could tell"
    return f"earlier run: batch {trusted.config.batch}"


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

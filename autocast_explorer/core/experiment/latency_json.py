"""A latency entry as every document writes and reads it (result, sweep, routes)."""

from __future__ import annotations

from typing import Any

from autocast_explorer.core.documents.reader import JsonReader
from autocast_explorer.core.experiment.timing import LatencyStats


def latency_to_dict(stats: LatencyStats, flops: int | None = None) -> dict[str, Any]:
    """A latency entry as every document writes it (gflops only when FLOPs are known)."""
    data: dict[str, Any] = {
        "median_ms": stats.median_ms,
        "p25_ms": stats.p25_ms,
        "p75_ms": stats.p75_ms,
        "iqr_ms": stats.iqr_ms,
        "samples": stats.samples,
        "cold_ms": stats.cold_ms,
        "block_size": stats.block_size,
    }
    if flops is not None:
        data["gflops"] = stats.gflops(flops)
    data["times_ms"] = list(stats.times_ms)
    return data


def latency_from_reader(r: JsonReader) -> LatencyStats:
    """Durations are ≥ 0, counts whole: a negative median or 2.5 samples is refused."""
    return LatencyStats(
        median_ms=r.number("median_ms", minimum=0),
        p25_ms=r.number("p25_ms", minimum=0),
        p75_ms=r.number("p75_ms", minimum=0),
        iqr_ms=r.number("iqr_ms", minimum=0),
        samples=r.whole("samples", minimum=0),
        cold_ms=r.number("cold_ms", minimum=0),
        block_size=r.whole("block_size", minimum=1, default=1),
        times_ms=tuple(r.numbers("times_ms", required=False, minimum=0)),
    )

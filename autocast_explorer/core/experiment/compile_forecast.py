"""How long `torch.compile` (inductor) will take on a model, before compiling it.

A compile is the compiled route's first call of each precision (float32, then autocast), and
its cost grows with the modules inductor generates code for, on top of a base (Dynamo,
inductor's lowering, the C++ compiler's start). Measured here (1 core of an AMD EPYC Zen 4,
torch 2.13, `routes eager,compiled`, both precisions, seconds; leaf modules in brackets), each
model in a fresh process with an empty inductor cache, then again with its cache:

    model                        leaves  native cold  AVX2 cold  cached (both)
    MLP 3 layers                     5       13.8        5.1       2.5–3.6
    CNN 3→32→64                     11       20.8        8.4       2.9–3.1
    transformer d 256 (fused)       18       15.3        4.4       2.9–3.5
    DistilBERT 2 layers             26       22.0       15.4       3.8–4.0
    U-Net base 8 (bench/guards.py)  59   58.8–60.4  48.8–53.8      4.2–4.3

A cold compile is COLD_BASE_S + COLD_S_PER_LEAF × leaves (4 + 0.85 × leaves: 0.60–1.26 of
the native figures, 1.06–1.7 of the AVX2 ones; the fused transformer, whose parts compile to
one op, 4.4× under AVX2). A cached one (this model compiled before, by any process sharing
the cache folder, at any path) took 2.5–4.3 s whatever the model. Which one a run meets is
unknown before it compiles, so the likely figure is their geometric middle (√(cold ÷ cached)
from either: 1.5× for the MLP, 3.9× for the U-Net, whose run adds its forwards and timing),
and the cold figure is the most. Once this process has compiled,
its fastest compile ÷ the cold figure scales every later forecast (and the guard then
refuses one over MAX_COMPILE_SECONDS).
"""

from __future__ import annotations

import math

from autocast_explorer.core.experiment.memory_bound import GuardError

#: A compile cannot be interrupted either; past this forecast the compiled route is refused.
MAX_COMPILE_SECONDS = 120.0
#: A first compile of a model (nothing cached): base and seconds per leaf module (the table).
COLD_BASE_S = 4.0
COLD_S_PER_LEAF = 0.85
#: A compile whose kernels inductor has cached (the table's last column).
CACHED_S = 3.5
#: This process's fastest compile ÷ its cold forecast (the forecasts' scale once measured).
_COMPILE_SCALE: list[float] = []


def cold_compile_s(leaves: int) -> float:
    """Seconds of a first compile (both precisions) of a model of `leaves` leaf modules."""
    return COLD_BASE_S + COLD_S_PER_LEAF * max(leaves, 1)


def record_compile(seconds: float, leaves: int) -> None:
    """Remember this compile against its cold forecast; the fastest is kept (the first compile
    of a process also imports inductor, and a stalled one must not refuse later models)."""
    scale = seconds / cold_compile_s(leaves)
    _COMPILE_SCALE[:] = [min([scale, *_COMPILE_SCALE])]


def estimate_compile(leaves: int) -> float | None:
    """Seconds to compile a model of `leaves` leaf modules (both precisions) at this process's
    fastest compile so far; None before anything was compiled."""
    return _COMPILE_SCALE[0] * cold_compile_s(leaves) if _COMPILE_SCALE else None


def forecast_compile(leaves: int) -> float:
    """The likely seconds: estimate_compile, or before any compile in this process the middle
    of a cold compile and a cached one (whichever the cache holds)."""
    seconds = estimate_compile(leaves)
    return seconds if seconds is not None else math.sqrt(cold_compile_s(leaves) * CACHED_S)


def most_compile_s(leaves: int) -> float:
    """The most a compile is forecast to take: estimate_compile, else a cold compile."""
    seconds = estimate_compile(leaves)
    return seconds if seconds is not None else cold_compile_s(leaves)


def check_compile(leaves: int, allow_slow: bool = False) -> float | None:
    """Raise GuardError when the compile forecast exceeds MAX_COMPILE_SECONDS (unless
    allowed); returns the forecast (None: no compile measured yet in this process)."""
    seconds = estimate_compile(leaves)
    if seconds is not None and seconds > MAX_COMPILE_SECONDS and not allow_slow:
        raise GuardError(
            "time",
            f"compiling is estimated at {seconds:,.0f} s (limit {MAX_COMPILE_SECONDS:.0f} s, "
            f"{leaves} modules at this session's fastest compile); allow slow runs "
            "(--allow-slow) to compile anyway",
        )
    return seconds

"""How the numerics views write numbers, so the chart, its tooltips and the tables agree.

Core keeps non-finite metrics as ±inf/NaN (core/numerics.py explains which means what); these
helpers turn them into words instead of "inf".
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autocast_explorer.core.numerics.layer_error import LayerError

NOT_MEASURED = "—"


def g3(value: float) -> str:
    """Three significant digits (errors span many orders of magnitude)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    return f"{value:.3g}"


def sqnr(error: LayerError | None) -> str:
    """SQNR in dB with one decimal; '∞ (identical)' when nothing changed."""
    if error is None:
        return NOT_MEASURED
    if error.identical:
        return "∞ (identical)"
    value = error.sqnr_db
    if math.isnan(value):
        return "NaN (overflow)"
    if math.isinf(value):
        return "−∞ (float32 output all 0)"
    return f"{value:.1f}"


def cosine(value: float) -> str:
    """Seven decimals: low-precision cosines differ from 1 in the 6th or 7th digit."""
    if math.isnan(value):
        return "NaN"
    return f"{value:.7f}"


def percent(fraction: float, digits: int = 1) -> str:
    return f"{100 * fraction:.{digits}f}%"


def bytes_text(count: int) -> str:
    """Exact bytes with a readable KiB/MiB figure beside them."""
    if count < 1024:
        return f"{count:,} B"
    if count < 1024**2:
        return f"{count:,} B ({count / 1024:.1f} KiB)"
    return f"{count:,} B ({count / 1024**2:.1f} MiB)"


def shape(dims: tuple[int, ...] | list[int]) -> str:
    return "×".join(str(n) for n in dims) if dims else "scalar"


def error_tooltip(name: str, kind: str, out_dtype: str, error: LayerError | None) -> str:
    """Every metric of one layer, as the error chart's hover text."""
    if error is None:
        return f"{name} ({kind}): error not measured in this result"
    lines = [
        f"{name} ({kind}), autocast output {out_dtype}, {error.numel:,} values",
        f"SQNR: {sqnr(error)} dB",
        f"max |error|: {g3(error.max_abs)}",
        f"mean |error|: {g3(error.mean_abs)}",
        f"mean relative error: {g3(error.mean_rel)}",
        f"cosine similarity: {cosine(error.cosine)}",
    ]
    if error.nonfinite:
        lines.append(f"{error.nonfinite:,} values overflowed to inf/NaN under autocast")
    return "\n".join(lines)

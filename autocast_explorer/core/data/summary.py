"""Words for a run on real data: the accuracies, the interval and the flipped rows.

The command line prints these lines and reports reuse them, so both say the same thing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch-free at import: the window imports these words before torch loads
    from autocast_explorer.core.data.answers import AccuracyReport
    from autocast_explorer.core.data.records import DataInfo

#: Flipped rows printed before "… and N more".
LISTED_FLIPS = 10


def epochs_text(count: int) -> str:
    """'1 epoch', '20 epochs'."""
    return f"{count} epoch{'s' if count != 1 else ''}"


def data_line(info: DataInfo) -> str:
    """What the model was fitted to: '1,347 rows trained 20 epochs in float32, 450 held out'."""
    if info.checkpoint:
        return (
            f"{info.name}: weights from {info.checkpoint} (not trained here), "
            f"{info.n_test:,} rows evaluated"
        )
    return (
        f"{info.name}: trained {epochs_text(info.epochs)} in float32 on {info.n_train:,} rows, "
        f"{info.n_test:,} rows held out (seeded split)"
    )


def interval_text(acc: AccuracyReport) -> str:
    """'−0.2 points (95% interval −0.7 … +0.2)': autocast minus float32, in percentage points."""
    low, high = acc.interval
    return (
        f"{acc.difference * 100:+.1f} points (95% interval {low * 100:+.1f} … {high * 100:+.1f}, "
        "paired bootstrap over held-out rows)"
    )


def answers_verdict(acc: AccuracyReport) -> str:
    """One sentence: did autocast change the answers on these rows, and did it matter?"""
    low, high = acc.interval
    if acc.flipped_total == 0:
        return f"{acc.dtype} autocast gave the same answer as float32 on all {acc.rows:,} rows."
    changed = f"{acc.dtype} autocast changed {acc.flipped_total} of {acc.rows:,} answers"
    if low <= 0 <= high:
        return (
            f"{changed}; the accuracy difference is within what chance explains "
            "(0 is inside its interval)."
        )
    worse = "lower" if high < 0 else "higher"
    return (
        f"{changed}; accuracy is {worse} under autocast beyond chance (0 is outside its interval)."
    )


def flipped_lines(acc: AccuracyReport, limit: int = LISTED_FLIPS) -> list[str]:
    """One line per flipped row (at most `limit`, then a count)."""
    lines = [
        f"  row {f.index}: label {f.label} · float32 says {f.plain} (margin {f.plain_margin:.3g}) "
        f"· autocast says {f.autocast} (margin {f.autocast_margin:.3g})"
        for f in acc.flipped[:limit]
    ]
    if acc.flipped_total > limit:
        lines.append(f"  … and {acc.flipped_total - limit} more")
    return lines


def accuracy_lines(info: DataInfo | None, acc: AccuracyReport | None) -> list[str]:
    """The summary's section on real data in inference mode ([] for synthetic runs)."""
    if info is None:
        return []
    lines = ["", f"Held-out accuracy ({data_line(info)}):"]
    if acc is None:
        lines.append("  autocast: not evaluated (the autocast forward raised, see the finding)")
        return lines
    lines += [
        f"  float32   {acc.plain:.2%}",
        f"  {acc.dtype:<9} {acc.autocast:.2%}  autocast",
        f"  difference {interval_text(acc)}",
        f"  {answers_verdict(acc)}",
    ]
    if acc.flipped_total:
        lines.append(f"Flipped rows ({acc.flipped_total}):")
        lines += flipped_lines(acc)
    return lines


def accuracy_markdown(info: DataInfo | None, acc: AccuracyReport | None) -> list[str]:
    """The report's section on real data (Markdown lines; [] for synthetic runs)."""
    if info is None:
        return []
    out = ["## Held-out accuracy on real data", "", f"{data_line(info)}.", ""]
    if acc is None:
        return [
            *out,
            "No autocast answers: the autocast forward raised, or training mode "
            "compared two separately trained copies (see Training).",
        ]
    out += [
        f"- float32: {acc.plain:.2%} of {acc.rows:,} held-out rows",
        f"- {acc.dtype} autocast: {acc.autocast:.2%}",
        f"- difference: {interval_text(acc)}",
        f"- {answers_verdict(acc)}",
    ]
    if acc.flipped:
        out += [
            "",
            "| row | label | float32 | margin | autocast | margin |",
            "|---|---|---|---|---|---|",
        ]
        out += [
            f"| {f.index} | {f.label} | {f.plain} | {f.plain_margin:.3g} | {f.autocast} | "
            f"{f.autocast_margin:.3g} |"
            for f in acc.flipped[:LISTED_FLIPS]
        ]
        if acc.flipped_total > LISTED_FLIPS:
            out.append(f"\n… and {acc.flipped_total - LISTED_FLIPS} more rows flipped.")
    out += [
        "",
        "`reproduce.py` rebuilds the model untrained on random inputs: it checks the dtypes and "
        "timings, not these accuracies.",
    ]
    return out

"""What each op policy and documented value means, in words and colour.

One table per meaning, read by the legend, the counts and the table's cells alike.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.numerics.oppolicy import OpPolicy, ProbeResult

#: The classes core.oppolicy derives, in legend order, with one sentence each.
POLICY_MEANINGS: dict[str, str] = {
    "lower": "float32 inputs come out in the autocast dtype: autocast casts them down and the "
    "op runs in low precision.",
    "fp32": "low-precision inputs come out in float32: autocast casts them up, the op runs in "
    "float32.",
    "follows": "no autocast rule: the output keeps the input's dtype (float32 in → float32, "
    "low in → low).",
    "promote": "no autocast rule: equal dtypes are kept, but mixed float32/low inputs give "
    "float32, the wider (type promotion).",
    "error": "the op raised an error for one of the input cases (hover for the message).",
    "other": "none of the above: the observed dtypes are in the row's tooltip.",
}
#: The documented column's values, in words (tooltips).
DOCUMENTED_MEANINGS: dict[str, str] = {
    "lower": "on PyTorch's CPU list of ops that autocast to the low-precision dtype",
    "fp32": "on PyTorch's CPU list of ops that autocast to float32",
    "promote": "documented to run in the widest input type",
    "unlisted": "on no CPU list: the docs say it runs in the type defined by its inputs",
}
#: Short legend words beside each policy chip (the full meaning is the chip's tooltip).
POLICY_SHORT: dict[str, str] = {
    "lower": "cast down",
    "fp32": "cast up",
    "follows": "input's dtype",
    "promote": "widest input",
    "error": "raised",
    "other": "none of these",
}
POLICY_COLORS: dict[str, str] = {
    "fp32": style.dtype_color("float32"),
    "follows": "#7f8c8d",
    "promote": "#7b4fa0",
    "error": style.BAD,
    "other": style.WARN,
}


def policy_color(policy: str, dtype: str) -> str:
    """'lower' wears the autocast dtype's color, 'fp32' float32's, as everywhere else."""
    if policy == "lower":
        return style.dtype_color(dtype)
    return POLICY_COLORS.get(policy, style.UNKNOWN_DTYPE_COLOR)


def legend_html(low: str) -> str:
    """One coloured chip per policy with its short meaning (`low`: the autocast dtype)."""
    parts = []
    for policy, short in POLICY_SHORT.items():
        color = policy_color(policy, low)
        parts.append(
            f"<span style='background:{color}; color:white'>&nbsp;<b>{policy}</b>&nbsp;"
            f"</span>&nbsp;{short}"
        )
    return (
        "&nbsp;&nbsp; ".join(parts)
        + f"&nbsp;&nbsp; <span style='color:{style.MUTED}'>(hover for meanings; "
        "documented = what PyTorch publishes)</span>"
    )


def legend_tip() -> str:
    """Every policy's full meaning, for the legend's tooltip."""
    return (
        "<br>".join(f"<b>{p}</b>: {m}" for p, m in POLICY_MEANINGS.items())
        + "<br><br>Policies are derived from the observed output dtypes, never looked up."
    )


def counts_html(probe: ProbeResult, shown: list[OpPolicy]) -> str:
    """Ops per policy (shown / probed while a filter hides some), and how many disagree."""
    counts = Counter(op.policy for op in shown)
    chips = []
    for policy, total in probe.policy_counts().items():
        color = policy_color(policy, probe.dtype)
        n = counts.get(policy, 0)
        text = f"{n}/{total}" if len(shown) != len(probe.ops) else f"{total}"
        chips.append(f"<span style='color:{color}'><b>{text}</b> {policy}</span>")
    disagree = sum(op.disagrees for op in shown)
    head = (
        f"<b>{len(shown)} of {len(probe.ops)}</b> shown"
        if len(shown) != len(probe.ops)
        else f"<b>{len(probe.ops)}</b> ops"
    )
    return f"{head}: " + " · ".join(chips) + f" · <b>{disagree}</b> ⚠ disagree"

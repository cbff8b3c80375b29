"""Words for the op-policy probe: the table `autocast-explorer ops` prints.

Kept in core beside the run's summary (summary.py, which re-exports it) so the CLI and any
other front end print the same table.
"""

from __future__ import annotations

from autocast_explorer.core.numerics.opcategories import CATEGORIES
from autocast_explorer.core.numerics.oppolicy import CASE_LABELS, DOCUMENTED_PREFIX, ProbeResult

POLICY_WORDS: dict[str, str] = {
    "lower": "runs in the autocast dtype",
    "fp32": "forced to float32",
    "follows": "keeps its input's dtype",
    "promote": "widest of its inputs",
    "error": "raised an error",
    "other": "none of the above",
}


def format_probe(probe: ProbeResult) -> str:
    """The table `autocast-explorer ops` prints: rows grouped by category, documented beside
    measured (`!` marks a disagreement), then counts, errors and notes."""
    low = probe.dtype
    env = probe.environment
    columns = ("float32", "low", "low_first", "float32_first")
    headers = ("float32 in", f"{low} in", f"{low}+f32 in", f"f32+{low} in")
    rows = []
    for op in probe.ops:
        cells = [op.case(case) for case in columns]
        texts = ["-" if c is None else c.cell_text() for c in cells]
        documented = op.documented.policy if op.documented else "?"
        rows.append((op, documented, texts))
    name_w = max(len("op"), *(len(op.name) for op in probe.ops)) if probe.ops else 2
    col_w = max(len(h) for h in (*headers, *(t for _o, _d, ts in rows for t in ts))) + 2
    lines = [
        f'Op policy under torch.autocast("cpu", dtype=torch.{low}) · torch {env.torch_version} '
        f"· {env.cpu_model}",
        "Output dtype for each kind of input (mixed: first input, then the rest; - : n/a; "
        "bool[float32]: the dtype it computed in); documented: what PyTorch publishes; "
        "! : they disagree.",
        "",
        f"{'op':<{name_w}}  {'policy':<8} {'documented':<11}"
        + "".join(f"{h:<{col_w}}" for h in headers),
    ]
    by_name = {op.name: (documented, texts) for op, documented, texts in rows}
    for category, ops in probe.by_category().items():
        label = CATEGORIES.get(category, category or "uncategorized")
        lines.append(f"-- {label} ({len(ops)}) --")
        for op in ops:
            documented, texts = by_name[op.name]
            flag = "  !" if op.disagrees else ""
            lines.append(
                f"{op.name:<{name_w}}  {op.policy:<8} {documented:<11}"
                + "".join(f"{t:<{col_w}}" for t in texts)
                + flag
            )
    lines.append("")
    for policy, count in probe.policy_counts().items():
        lines.append(f"{policy:<8}({POLICY_WORDS.get(policy, policy)}): {count}")
    disagreeing = probe.disagreements()
    agreeing = sum(1 for op in probe.ops if op.documented is not None) - len(disagreeing)
    lines.append(
        f"documented vs measured: {agreeing} agree, {len(disagreeing)} disagree"
        + (f" ({', '.join(op.name for op in disagreeing)})" if disagreeing else "")
    )
    for key, origin in probe.sources.items():
        lines.append(f"  {key}: {origin}")
    errors = [op for op in probe.ops if any(c.error for c in op.cases)]
    if errors:
        lines += ["", "Errors:"]
        for op in errors:
            for c in op.cases:
                if c.error:
                    lines.append(f"  {op.name} with {CASE_LABELS[c.case]}: {c.error}")
    documented_notes = [n for n in probe.notes if n.source.startswith(DOCUMENTED_PREFIX)]
    if documented_notes:
        lines += ["", "Where this torch on this CPU disagrees with what PyTorch documents:"]
        for note in documented_notes:
            lines += [f"  {note.op} — documented: {note.claim} ({note.source})"]
            lines += [f"    {note.verdict}"]
    groups: dict[tuple[str, str], list[str]] = {}
    for note in probe.notes:
        if note.contradicts and not note.source.startswith(DOCUMENTED_PREFIX):
            groups.setdefault((note.source, note.verdict), []).append(note.op)
    if groups:
        lines += ["", "Where this CPU contradicts common belief:"]
        for (source, verdict), names in groups.items():
            lines += [f"  {source}", f"    {', '.join(names)} — {verdict}"]
    return "\n".join(line.rstrip() for line in lines)

"""The probe's notes: why ops disagree with their documentation, then common beliefs.

HTML built from core's notes alone, so nothing here is hard-coded about any op.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from autocast_explorer.gui.shell import style

if TYPE_CHECKING:
    from autocast_explorer.core.numerics.oppolicy import Note, ProbeResult

NOTE_BACKGROUND = "#fff3cd"
NOTE_BORDER = "#e0a800"
IDLE = (
    "Press <b>Probe</b> (F9) to run every op on PyTorch's CPU autocast lists (and common "
    "unlisted ones) under torch.autocast('cpu') with float32, low-precision and mixed inputs, "
    "classify each from the dtypes it returns, and set it beside what PyTorch documents."
)


def idle_html() -> str:
    """What the notes say before any probe: how to start one."""
    return f"<p style='color:{style.MUTED}'>{IDLE}</p>"


def _note_box(body: str) -> str:
    return (
        f"<table width='100%' cellpadding='4' style='background:{NOTE_BACKGROUND};"
        f"border:1px solid {NOTE_BORDER}; margin-top:4px'><tr><td>" + body + "</td></tr></table>"
    )


def notes_html(probe: ProbeResult) -> str:
    """Disagreements with the documentation first (each with its reason), then common
    beliefs contradicted here, one box per source; where the documentation came from."""
    from autocast_explorer.core.numerics.oppolicy import DOCUMENTED_PREFIX

    documented = [n for n in probe.notes if n.source.startswith(DOCUMENTED_PREFIX)]
    beliefs = [n for n in probe.notes if not n.source.startswith(DOCUMENTED_PREFIX)]
    html = [
        f"<h3 style='margin:0'>Disagreements with PyTorch's documentation ({len(documented)})</h3>"
    ]
    for n in documented:
        html.append(_note_box(f"<b>{n.op}</b> — documented: <i>{n.claim}</i>.<br>{n.verdict}"))
    if not documented:
        html.append("<p>None: every probed op does what PyTorch documents.</p>")
    if probe.sources:
        origin = "<br>".join(f"<b>{k}</b>: {v}" for k, v in probe.sources.items())
        html.append(f"<p style='color:{style.MUTED}'>Documented from:<br>{origin}</p>")
    html.extend(_belief_notes(beliefs))
    return "".join(html)


def _belief_notes(beliefs: list[Note]) -> list[str]:
    """Beliefs this CPU contradicts, one box per source; those that hold, in one line."""
    against = [n for n in beliefs if n.contradicts]
    holds = [n for n in beliefs if not n.contradicts]
    html = [
        f"<h3 style='margin:0'>Where this CPU contradicts common belief ({len(against)} notes)</h3>"
    ]
    sources: dict[str, dict[str, list[Note]]] = {}
    for n in against:
        sources.setdefault(n.source, {}).setdefault(n.verdict, []).append(n)
    for source, verdicts in sources.items():
        rows = [f"<i>{source}</i>"]
        for verdict, notes in verdicts.items():
            rows.append(f"<b>{verdict}</b>: {', '.join(n.op for n in notes)}")
        html.append(_note_box("<br>".join(rows)))
    if not against:
        html.append("<p>None: every belief checked holds here.</p>")
    if holds:
        ops = ", ".join(dict.fromkeys(n.op for n in holds))
        html.append(
            f"<p style='color:{style.MUTED}'>Holds on this CPU too (forced to float32 as "
            f"on CUDA): {ops}.</p>"
        )
    return html

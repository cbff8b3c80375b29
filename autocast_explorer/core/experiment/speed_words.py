"""The speed half of every verdict, in words: the headline's clause, the latency chart's title,
the report's and the summary's speedup lines, and the CPU rates a run may state.

One place so the window, the CLI, reports and lessons word a call alike (certainty.judge makes
it): a "can't tell" or "too noisy" call gets no figure in any of them.
"""

from __future__ import annotations

from autocast_explorer.core.experiment.certainty import SpeedCall, speedup_basis
from autocast_explorer.core.experiment.pace import SPEED_CALL_WORDS, rough_text
from autocast_explorer.core.experiment.result import ExperimentResult


def speed_clause(result: ExperimentResult) -> str:
    """The speed half of the verdict: the direction, the factor (with its interval when firm)
    and, when the factor is rough, why.

    A "can't tell" or "too noisy" run names no figure here nor anywhere else: its reasons say
    what was measured and what helps.
    """
    return call_clause(result.speed_call)


def call_clause(call: SpeedCall) -> str:
    """`speed_clause` for a call by itself (docs/measurement.md's table shows these)."""
    if call.kind == "untimed":
        return "autocast could not be timed"
    if call.kind in ("faster", "slower") and call.rough:
        return (
            f"autocast was {call.kind} here — about {rough_text(call.times)}× ({call.rough}, "
            "so the factor is uncertain)"
        )
    if call.kind == "faster":
        return f"autocast was {call.times:.2f}× faster here{call.interval_text()}"
    if call.kind == "slower":
        return f"autocast was {call.times:.2f}× slower here{call.interval_text(slower=True)}"
    if call.kind == "same":
        within = f", {call.interval.text()}" if call.interval is not None else ""
        return f"autocast ran at about the same speed here ({call.speedup:.2f}×{within})"
    if call.kind == "unclear":
        return f"can't tell whether autocast was faster: {'; '.join(call.reasons)}"
    helps = f"; what helps: {', '.join(call.advice)}" if call.advice else ""
    return f"too noisy to tell whether autocast was faster: {'; '.join(call.reasons)}{helps}"


def untold_words(call: SpeedCall) -> str:
    """Why the bars of a call that states no figure are not a result: 'was too noisy to tell
    (…its reasons)' or 'could not tell which mode was faster (…)'; '' for a call that may state
    its figure, and for one not timed (it has no bars)."""
    if call.kind not in ("noisy", "unclear"):
        return ""
    verb = "was too noisy to tell" if call.too_noisy else "could not tell which mode was faster"
    return f"{verb} ({'; '.join(call.reasons) or 'no interval'})"


#: What the latency chart's title calls its figure, beside bars that show medians.
FIGURE_NAME = "typical paired ratio"


def speed_title(result: ExperimentResult) -> tuple[str, str]:
    """(words, tone) for the latency chart's title; tone is "ok", "bad", "warn" or "muted".

    The bars are medians; the figure is the paired estimate, so the title names it ("typical
    paired ratio"). A "can't tell" or "too noisy" run gets no figure: its bars are drawn as
    unreliable instead.
    """
    call = result.speed_call
    if result.autocast_error:
        return "autocast raised an error: not timed", "bad"
    if call.kind == "untimed":
        return "speedup could not be measured", "muted"
    if call.kind == "noisy":
        return "too noisy to tell: these bars are not a result", "warn"
    if call.kind == "unclear":
        return "can't tell which was faster", "muted"
    if call.rough:
        return f"autocast {call.figure_text()} ({FIGURE_NAME}; {call.rough})", (
            "ok" if call.kind == "faster" else "bad"
        )
    within = call.interval_text(slower=call.kind == "slower").strip()[1:-1]
    figure = f"({FIGURE_NAME}{', ' + within if within else ''})"
    if call.kind == "same":
        return f"about the same speed: {call.speedup:.2f}× {figure}", "muted"
    return f"autocast {call.figure_text()} {figure}", "ok" if call.kind == "faster" else "bad"


def speed_interval_words(result: ExperimentResult) -> str:
    """' (95%: 1.66–1.79 over 24 paired blocks)' for a firm figure, ': can't tell' or ': too
    noisy to tell' when no figure may be stated; '' for results saved before intervals."""
    call = result.speed_call
    if call.interval is None and result.evidence is None:
        return ""
    if not call.graded:
        return {"noisy": ": too noisy to tell", "unclear": ": can't tell"}.get(call.kind, "")
    if call.rough:
        return f" (rough: {call.rough})"
    interval = call.interval
    if interval is None:
        return ""
    if not interval.shown:  # of lower coverage: no interval, only how few rounds there were
        return f" ({interval.too_few_text()})"
    return f" ({interval.text()} over {interval.pairs} paired blocks)"


def rates_clause(result: ExperimentResult) -> str:
    """Both modes' GFLOP/s, a fact about this CPU only from a run whose call is not too noisy
    (a busy machine's rates say more about the other programs)."""
    if result.speed_call.too_noisy:
        return "no GFLOP/s stated: this run was too noisy to tell"
    return (
        f"{result.gflops('autocast'):,.1f} GFLOP/s under autocast against "
        f"{result.gflops('plain'):,.1f} GFLOP/s in float32"
    )


def speedup_line(result: ExperimentResult) -> str:
    """The summary's speedup figure and how it was made; none for can't tell or too noisy."""
    call = result.speed_call
    if call.kind in ("unclear", "noisy"):
        return f"not stated: {SPEED_CALL_WORDS[call.kind]} (see the verdict)"
    if call.rough:
        return f"{call.figure_text()} (rough: {call.rough})"
    return f"{result.speedup:.3f}× ({speedup_basis(result.evidence)})"

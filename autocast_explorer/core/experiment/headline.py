"""The Overview's headline: one short sentence in plain words, and the reasons behind it.

A presenter's window at 1024×640 with 150% text has room for about two lines of large type
above the charts, so the headline says only what the run found (faster, slower, about the same,
or that it cannot tell); the interval, the machine's load, the stalls, what would help, the
hardware and the agreement are `why`, shown on request ("Why?", beside the time guard's forecast
and the run's warnings). The status bar keeps the whole verdict sentence
(core.experiment.summary.verdict).
"""

from __future__ import annotations

from dataclasses import dataclass

from autocast_explorer.core.experiment.pace import rough_text
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.experiment.summary import (
    autocast_error_finding,
    hardware_clause,
    measurement_lines,
    speed_clause,
)


@dataclass(frozen=True)
class Headline:
    """`sentence` for the headline; `why` the reasons, one sentence each; `raised` when the
    autocast forward raised (the window draws the sentence as an error)."""

    sentence: str
    why: tuple[str, ...]
    raised: bool = False


def _sentence(text: str) -> str:
    """Capitalised, ending in one full stop."""
    text = text.strip().rstrip(".")
    return text[:1].upper() + text[1:] + "." if text else ""


def _factor(ratio: float) -> str:
    return f"{ratio:.2f}×" if ratio >= 0.01 else f"{ratio:.2g}×"


def speed_sentence(result: ExperimentResult) -> str:
    """What the timing found, in plain words: no interval, no jargon, a figure only when the
    call may state one, and only roughly when load moved the ratio (the direction is sure,
    the factor is not: "Autocast was slower here — about 7×.")."""
    call = result.speed_call
    kind = call.kind
    if kind in ("faster", "slower"):
        if call.rough:
            return f"Autocast was {kind} here — about {rough_text(call.times)}×."
        return f"Autocast was {_factor(call.times)} {kind} here."
    if kind == "same":
        return "Autocast ran at about the same speed as float32 here."
    if kind == "unclear":
        return "Can't tell whether autocast was faster or slower here."
    if kind == "noisy":
        return "Too noisy to tell whether autocast was faster here."
    return "Autocast could not be timed."


def _speed_reasons(result: ExperimentResult) -> list[str]:
    """The call's grounds: its interval (or why there is no call), then what would help."""
    call = result.speed_call
    if call.kind != "noisy":
        return [_sentence(speed_clause(result))]
    reasons = [_sentence(f"Too noisy to tell: {reason}") for reason in call.reasons]
    if call.advice:
        reasons.append(_sentence(f"What helps: {', '.join(call.advice)}"))
    return reasons


def _agreement(result: ExperimentResult) -> list[str]:
    agree = result.agreement
    if agree is None:
        return []
    if agree.no_argmax_reason:
        return [f"The outputs' cosine similarity was {agree.cosine:.6f} (no predicted class)."]
    return [f"Predictions agreed on {agree.agree}/{agree.rows} rows."]


def headline(result: ExperimentResult) -> Headline:
    """The headline sentence and its reasons for `result`."""
    raised, _meaning = autocast_error_finding(result)
    hardware = _sentence(hardware_clause(result))
    if raised:  # the finding under the headline gives torch's message and what it means
        # Its first clause only ("… could not run this model here"): the finding says how it
        # raised, and the whole sentence wrapped to 3 lines at 1024×640 with 150% text.
        return Headline(_sentence(raised.split(": ", 1)[0]), (hardware,), raised=True)
    why = [
        *_speed_reasons(result),
        hardware,
        *_agreement(result),
        *(_sentence(line) for line in measurement_lines(result)),
    ]
    return Headline(speed_sentence(result), tuple(why))

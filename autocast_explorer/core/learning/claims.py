"""The claims a built-in preset makes, each checked against the run it describes.

A preset's description is written once, for every CPU and torch; what autocast does is decided
by the installed torch on this CPU. So each sentence of a built-in preset that states a dtype, a
direction or a cause is listed here as a `Claim` with a check over the result: the window shows
it beside the description once the preset's config has run, marked as holding or not on this
run, with what was measured instead. A claim the run cannot decide (the autocast forward raised,
nothing was timed) says so rather than guessing.

No torch import: the presets box imports this before torch has loaded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from autocast_explorer.core.experiment.pace import ratio_text, rough_text

if TYPE_CHECKING:
    from autocast_explorer.core.experiment.capture import LayerRecord
    from autocast_explorer.core.experiment.result import ExperimentResult

#: A check: (holds, what was measured) — holds None when this run cannot tell.
CheckFn = Callable[["ExperimentResult"], tuple[bool | None, str]]


@dataclass(frozen=True)
class Claim:
    """One sentence a preset states, and the check that compares it with a result."""

    text: str
    check: CheckFn = field(repr=False, compare=False)


@dataclass(frozen=True)
class ClaimCheck:
    """A claim checked against one result: `holds` True/False, None when the run cannot tell;
    `measured` says what the run showed, in words."""

    text: str
    holds: bool | None
    measured: str

    @property
    def line(self) -> str:
        mark = {True: "✓", False: "✗", None: "?"}[self.holds]
        verdict = {True: "holds here", False: "does not hold here", None: "not decided here"}
        return f"{mark} {self.text} — {verdict[self.holds]}: {self.measured}."


# ---- checks over a result -------------------------------------------------------------------
def _kind(result: ExperimentResult, kind: str) -> list[LayerRecord]:
    return [la for la in result.layers if la.kind == kind]


def _named(result: ExperimentResult, suffix: str) -> list[LayerRecord]:
    return [la for la in result.layers if la.name.rsplit(".", 1)[-1] == suffix]


def _outs(layers: list[LayerRecord]) -> set[str]:
    return {la.autocast.out_dtype for la in layers if la.autocast is not None}


def _returns(
    pick: Callable[[ExperimentResult], list[LayerRecord]], what: str, dtype: str | None
) -> CheckFn:
    """Every picked layer returns `dtype` under autocast (None: the run's autocast dtype)."""

    def check(result: ExperimentResult) -> tuple[bool | None, str]:
        want = dtype or result.config.dtype
        layers = pick(result)
        if result.autocast_error:
            return None, f"the autocast forward raised ({result.autocast_error[:80]})"
        if not layers:
            return None, f"this run recorded no {what}"
        outs = _outs(layers)
        return outs == {want}, f"{what} returned {'/'.join(sorted(outs))} under autocast"

    return check


def _computes_in_low(pick: Callable[[ExperimentResult], list[LayerRecord]], what: str) -> CheckFn:
    """The picked layers' matrix products ran in the autocast dtype (from the op trace)."""

    def check(result: ExperimentResult) -> tuple[bool | None, str]:
        low = result.config.dtype
        traced = [
            (la.name, auto.out_dtype, compute)
            for la in pick(result)
            if (auto := la.autocast) is not None and (compute := auto.compute) is not None
        ]
        if result.autocast_error or not traced:
            return None, "no op trace of it in this run"
        ran = sum(compute.top_op(low)[1] for _name, _out, compute in traced)
        name, out_dtype, compute = traced[0]
        if not ran:
            dtypes = "/".join(compute.dtypes) or "no maths"
            return False, f"no op of the {what} ran in {low} (it computed in {dtypes})"
        return True, f"{name}: {compute.summary(out_dtype)}"

    return check


def _slower(result: ExperimentResult) -> tuple[bool | None, str]:
    """Judged by the run's speed call: a run too noisy to tell (or whose interval straddles
    'about the same') checks nothing, as it grades no lesson."""
    call = result.speed_call
    if call.kind == "untimed":
        return None, "autocast was not timed"
    if call.kind in ("noisy", "unclear"):  # no figure: the run could not tell
        words = "was too noisy to tell" if call.kind == "noisy" else "cannot tell"
        return None, f"this run {words} which mode was faster"
    if call.kind == "slower":
        times = f"about {rough_text(call.times)}" if call.rough else ratio_text(call.times)
        rough = f" ({call.rough})" if call.rough else ""
        return True, f"autocast took {times}× the float32 time{rough}"
    if call.kind == "same":
        return False, f"autocast ran at about the speed of float32 ({call.figure_text()})"
    return False, f"autocast ran {call.figure_text()} than float32" + (
        f" ({call.rough})" if call.rough else ""
    )


def _lstm_by_cpu(result: ExperimentResult) -> tuple[bool | None, str]:
    from autocast_explorer.core.hardware.capabilities import native_support

    native = native_support(result.environment.cpu_flags, result.config.dtype).native
    lstm = _kind(result, "LSTM")
    raised = bool(result.autocast_error)
    cpu = "this CPU multiplies bfloat16 natively" if native else "this CPU has no native bfloat16"
    if raised:
        return (not native), f"{cpu}, and the autocast forward raised"
    outs = "/".join(sorted(_outs(lstm))) or "nothing"
    return (native and _outs(lstm) == {"bfloat16"}), f"{cpu}, and the LSTM returned {outs}"


def _fused(expected: bool) -> CheckFn:
    def check(result: ExperimentResult) -> tuple[bool | None, str]:
        ran = (result.fast_path or {}).get("autocast")
        if ran is None:
            return None, "the autocast forward did not run to the end"
        return ran == expected, f"the fused encoder kernel {'ran' if ran else 'did not run'}"

    return check


def _losses_fall(result: ExperimentResult) -> tuple[bool | None, str]:
    train = result.train
    if train is None:
        return None, "this was not a training run"
    p, a = train.loss["plain"], train.loss["autocast"]
    falls = p[-1] < p[0] and a[-1] < a[0]
    return falls, (
        f"float32 {p[0]:.3f} → {p[-1]:.3f}, autocast {a[0]:.3f} → {a[-1]:.3f} "
        f"over {train.steps} steps"
    )


def _about_half_saved(result: ExperimentResult) -> tuple[bool | None, str]:
    train = result.train
    if train is None or not train.saved_bytes.get("plain"):
        return None, "no saved bytes were measured"
    share = train.saved_bytes["autocast"] / train.saved_bytes["plain"]
    return 0.35 <= share <= 0.65, f"autocast kept {share:.0%} of the float32 bytes"


def _head_float32(result: ExperimentResult) -> tuple[bool | None, str]:
    heads = _kind(result, "Softmax")
    if result.autocast_error or not heads or heads[0].autocast is None:
        return None, "no softmax head ran under autocast"
    a = heads[0].autocast
    return (
        a.out_dtype == "float32",
        f"the softmax head was fed {a.in_dtype}, returned {a.out_dtype}",
    )


_LINEARS_LOW = Claim(
    "Under autocast the Linear layers return the autocast dtype",
    _returns(lambda r: _kind(r, "Linear"), "the Linear layers", None),
)

#: Preset id → the claims its description makes (a built-in preset not listed makes none
#: about dtypes, directions or causes).
PRESET_CLAIMS: dict[str, tuple[Claim, ...]] = {
    "tutorial": (_LINEARS_LOW,),
    "float16": (_LINEARS_LOW,),
    "large-mlp": (_LINEARS_LOW,),
    "cnn": (
        Claim(
            "Conv2d returns bfloat16",
            _returns(lambda r: _kind(r, "Conv2d"), "the convolutions", "bfloat16"),
        ),
        Claim(
            "BatchNorm and pooling after it stay bfloat16",
            _returns(
                lambda r: _kind(r, "BatchNorm2d") + _kind(r, "MaxPool2d"),
                "BatchNorm and pooling",
                "bfloat16",
            ),
        ),
    ),
    "gru": (
        Claim(
            "The GRU returns float32 under autocast",
            _returns(lambda r: _kind(r, "GRU"), "the GRU", "float32"),
        ),
        Claim(
            "Inside it the matrix products run in bfloat16",
            _computes_in_low(lambda r: _kind(r, "GRU"), "GRU"),
        ),
        Claim(
            "The final Linear returns bfloat16",
            _returns(lambda r: _kind(r, "Linear"), "the Linear", "bfloat16"),
        ),
        Claim("Autocast is slower than float32 here", _slower),
    ),
    "lstm": (
        Claim(
            "A CPU without native bfloat16 raises a oneDNN error; one with it returns bfloat16",
            _lstm_by_cpu,
        ),
    ),
    "softmax-head": (
        Claim("The softmax head stays in float32 (the tutorial's list)", _head_float32),
    ),
    "training": (
        Claim("Both loss curves fall", _losses_fall),
        Claim("Autocast keeps about half the bytes saved for backward", _about_half_saved),
    ),
    "transformer": (
        Claim("torch runs its fused encoder kernel here", _fused(True)),
        Claim(
            "Under autocast each encoder layer returns bfloat16",
            _returns(
                lambda r: _kind(r, "TransformerEncoderLayer"), "the encoder layers", "bfloat16"
            ),
        ),
    ),
    "transformer-no-fast-path": (
        Claim("The fused kernel is off", _fused(False)),
        Claim(
            "Attention and the feed-forward run in bfloat16",
            _returns(
                lambda r: (
                    _kind(r, "MultiheadAttention") + _named(r, "linear1") + _named(r, "linear2")
                ),
                "attention and the feed-forward",
                "bfloat16",
            ),
        ),
        Claim(
            "Every encoder layer returns float32 (its residual add promotes)",
            _returns(
                lambda r: _kind(r, "TransformerEncoderLayer"), "the encoder layers", "float32"
            ),
        ),
    ),
}


def check_claims(claims: tuple[Claim, ...], result: ExperimentResult) -> tuple[ClaimCheck, ...]:
    """Each claim against `result`."""
    checked = []
    for claim in claims:
        holds, measured = claim.check(result)
        checked.append(ClaimCheck(claim.text, holds, measured))
    return tuple(checked)


def preset_claims(preset_id: str) -> tuple[Claim, ...]:
    """The claims of a built-in preset (none for a user's own or an unlisted one)."""
    return PRESET_CLAIMS.get(preset_id, ())

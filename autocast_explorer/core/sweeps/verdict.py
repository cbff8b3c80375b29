"""The hardware verdict: what the CPU offers for the autocast dtype, and what was measured.

Flags alone mislead (oneDNN emulates bfloat16 on AVX-512 CPUs without native instructions;
casts can eat a native GEMM's gain at small sizes), and measurements alone do not say why.
The sentence is built from both, e.g. "No native bfloat16 on this CPU: autocast ran 4.5×
slower at every size tried" or "avx512_bf16 present: autocast wins above batch 64".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, Field, WithJsonSchema, model_validator

from autocast_explorer.core.documents.field_types import (
    Flag,
    FlagMap,
    NullableFlag,
    Text,
    Whole,
    text_rules,
)
from autocast_explorer.core.documents.held import write_always
from autocast_explorer.core.documents.model import Part, dump, read
from autocast_explorer.core.experiment.certainty import SpeedCall
from autocast_explorer.core.experiment.pace import SAME_SPEED, rough_text
from autocast_explorer.core.hardware.capabilities import (
    NativeSupport,
    architecture_of,
    native_support,
)
from autocast_explorer.core.hardware.cpu import Environment
from autocast_explorer.core.hardware.onednn import OneDnnProbe
from autocast_explorer.core.sweeps.crossover import find_crossings, format_value

#: The flags the verdict panel lists, whether present or not: x86's, and Arm's on Arm.
VERDICT_FLAGS: tuple[str, ...] = ("avx512_bf16", "amx_bf16", "amx_tile", "avx512_fp16", "amx_fp16")
ARM_VERDICT_FLAGS: tuple[str, ...] = ("bf16", "svebf16", "sve", "asimdhp")


def verdict_flags(flags: Sequence[str]) -> tuple[str, ...]:
    """The flags worth listing for a CPU with `flags`: its architecture's (both if unknown)."""
    arch = architecture_of(flags)
    if arch == "arm":
        return ARM_VERDICT_FLAGS
    return VERDICT_FLAGS if arch == "x86" else VERDICT_FLAGS + ARM_VERDICT_FLAGS


#: Speedups within this factor of 1.0 everywhere count as "about even" when they wander across
#: (the same threshold as every other "about the same speed").
NOISE_BAND = SAME_SPEED


def _none_as_empty(value: Any) -> Any:
    return "" if value is None else value


class HardwareVerdict(Part):
    """Everything the hardware verdict panel shows (the sweep's `verdict`); `sentence` is the
    headline."""

    schema_name: ClassVar[str] = "verdict"

    sentence: Text
    hardware: Text
    measured: Text
    #: What ran in place of native instructions ('' when native; null in some files).
    instead: Annotated[
        str,
        *text_rules(),
        BeforeValidator(_none_as_empty),
        WithJsonSchema({"anyOf": [{"type": "string"}, {"type": "null"}]}),
    ] = Field(default=None, validate_default=True)
    cpu_model: Text
    cores: Whole
    threads: Whole
    cpu_capability: Text
    dtype: Text
    flags: FlagMap
    native: Flag
    torch_bf16_supported: NullableFlag = None
    torch_fp16_supported: NullableFlag = None
    mkldnn: Flag
    onednn: OneDnnProbe | None = None

    @model_validator(mode="after")
    def _written_whole(self) -> HardwareVerdict:
        write_always(self, *type(self).model_fields)
        return self

    def to_dict(self) -> dict[str, Any]:
        return dump(self)

    @classmethod
    def from_dict(cls, data: Any, path: str = "verdict") -> HardwareVerdict:
        """Strict reading (DocumentFormatError naming the first bad field)."""
        return read(cls, data, at=path)


def hardware_clause(env: Environment, dtype: str) -> tuple[str, bool]:
    """('avx512_bf16 present', True) or ('No native bfloat16 on this CPU', False)."""
    support = native_support(env.cpu_flags, dtype)
    if support.native:
        return f"{support.unit} present", True
    torch_says = env.torch_bf16_supported if dtype == "bfloat16" else env.torch_fp16_supported
    emulated = " (torch's oneDNN reports it supported: emulated)" if torch_says else ""
    return f"No native {dtype} on this CPU{emulated}", False


def instead_clause(
    support: NativeSupport,
    onednn: OneDnnProbe | None = None,
    rates: tuple[float, float] | None = None,
) -> str:
    """What ran where the dtype is not native, from the oneDNN probe, with both modes' rates.

    '' when the dtype is native, or when neither a probe nor a measurement says anything.
    """
    if support.native or (onednn is None and rates is None):
        return ""
    low = support.dtype
    if onednn is not None and onednn.captured and onednn.available:
        kernels = [k for k in onednn.autocast_kernels if k.primitive in ("matmul", "inner_product")]
        if kernels:
            names = ", ".join(dict.fromkeys(k.implementation for k in kernels))
            ran = f"oneDNN emulated the {low} GEMMs ({names}), converting to float32 inside"
        else:
            ran = (
                f"each {low} GEMM was a conversion plus a kernel outside oneDNN (torch's own "
                "or the BLAS library's; oneDNN ran no GEMM: it has no native path on this CPU)"
            )
    else:
        ran = f"each {low} GEMM converted its operands and ran without native instructions"
    if rates is not None and all(math.isfinite(r) and r > 0 for r in rates):
        plain, auto = rates
        ran += f": {auto:,.1f} GFLOP/s under autocast against {plain:,.1f} GFLOP/s in float32"
    return ran


def _ratio(value: float) -> str:
    """Two significant digits without scientific notation: 0.91, 4.5, 12, 860."""
    return f"{value:.2g}" if value < 10 else f"{value:.0f}"


def _factor(low: float, high: float) -> str:
    """'4.5×' when both ends round alike, else '3.9–6.1×'."""
    a, b = _ratio(low), _ratio(high)
    return f"{a}×" if a == b else f"{a}–{b}×"


def measured_clause(
    param: str, values: Sequence[float], speedups: Sequence[float], noisy: int = 0
) -> str:
    """What the sweep showed, in words (no hardware); `param` is 'batch' or 'width'.

    `noisy` counts the points whose speedup is NaN because they could not tell (too noisy,
    or can't tell: certainty.judge).
    """
    pairs = [(v, s) for v, s in zip(values, speedups, strict=True) if math.isfinite(s) and s > 0]
    if not pairs:
        if noisy:
            return "too noisy to tell" if len(values) == 1 else "every point was too noisy to tell"
        return "nothing was measured"
    xs = [v for v, _ in pairs]
    ss = [s for _, s in pairs]
    lo, hi = min(ss), max(ss)
    at_lo = pairs[ss.index(lo)][0]
    at_hi = pairs[ss.index(hi)][0]
    crossings = find_crossings(xs, ss)
    where = "at every size tried" if len(pairs) > 1 else f"at {param} {format_value(xs[0])}"
    if noisy and len(pairs) > 1:
        where = f"at the {len(pairs)} of {len(pairs) + noisy} sizes it could tell"
    if noisy and len(pairs) == 1:
        where = f"at {param} {format_value(xs[0])}, the one size it could tell"
    if lo >= 1 / NOISE_BAND and hi <= NOISE_BAND and len(crossings) <= 1:
        return f"autocast and float32 ran at about the same speed {where}"
    if not crossings:
        if lo >= 1:
            return f"autocast ran {_factor(lo, hi)} faster {where}"
        return f"autocast ran {_factor(1 / hi, 1 / lo)} slower {where}"
    if len(crossings) > 1 and lo >= 1 / NOISE_BAND and hi <= NOISE_BAND:
        return (
            f"autocast and float32 stayed within {NOISE_BAND - 1:.0%} of each other "
            f"({lo:.2f}–{hi:.2f}×) and the speedup crossed 1.0 {len(crossings)} times: "
            "about even, within noise"
        )
    last = crossings[-1]
    where = f"{param} {format_value(last.value)}"
    if len(crossings) > 1:
        listed = ", ".join(format_value(c.value) for c in crossings)
        prefix = f"the speedup crosses 1.0 at {param} {listed}; "
    else:
        prefix = ""
    if last.rising:
        return (
            f"{prefix}autocast wins above {where} (up to {hi:.2f}× faster at {param} "
            f"{format_value(at_hi)})"
        )
    return (
        f"{prefix}autocast wins below {where} and loses above it (down to {1 / lo:.2f}× "
        f"slower at {param} {format_value(at_lo)})"
    )


def hardware_verdict(
    env: Environment,
    dtype: str,
    param: str,
    values: Sequence[float],
    speedups: Sequence[float],
    onednn: OneDnnProbe | None = None,
    context: str = "",
    caveat: str = "",
    rates: tuple[float, float] | None = None,
    noisy: int = 0,
) -> HardwareVerdict:
    """The verdict panel's data for a sweep of `param` with the given speedups.

    `context` qualifies the measurement, e.g. "at width 4096 (the widest row)" for a grid;
    `caveat` is appended when the measurements themselves are in doubt (noisy machine);
    `rates` (float32 and autocast GFLOP/s of the largest point) say what a slow mode reached;
    `noisy` counts points left out (NaN) because they were too noisy to tell.
    """
    hardware, native = hardware_clause(env, dtype)
    instead = instead_clause(native_support(env.cpu_flags, dtype), onednn, rates)
    measured = measured_clause(param, values, speedups, noisy)
    if context:
        measured = f"{context}, {measured}"
    finite = [s for s in speedups if math.isfinite(s)]
    sentence = f"{hardware}: {measured}"
    if native and finite and max(finite) < 1:
        sentence += f" (the casts cost more than native {dtype} saves at these sizes)"
    if instead:
        sentence += f"; {instead}"
    if caveat:
        sentence += f" — {caveat}"
    present = set(env.cpu_flags)
    return HardwareVerdict(
        cpu_model=env.cpu_model,
        cores=env.cores,
        threads=env.threads,
        cpu_capability=env.cpu_capability,
        dtype=dtype,
        flags={flag: flag in present for flag in verdict_flags(env.cpu_flags)},
        native=native,
        torch_bf16_supported=env.torch_bf16_supported,
        torch_fp16_supported=env.torch_fp16_supported,
        mkldnn=env.mkldnn,
        hardware=hardware,
        measured=measured,
        sentence=sentence + ".",
        onednn=onednn,
        instead=instead,
    )


def flags_verdict(env: Environment, dtype: str) -> HardwareVerdict:
    """Before anything is measured: what the flags say, and that only a measurement can tell.

    The window shows this until a run or a sweep exists (flags alone mislead, see above).
    """
    verdict = hardware_verdict(env, dtype, "batch", [], [])
    return verdict.model_copy(
        update={
            "measured": "nothing measured yet",
            "sentence": f"{verdict.hardware}: nothing measured yet; whether autocast pays depends "
            "on the sizes, so measure a run or a sweep.",
        }
    )


def single_run_verdict(
    env: Environment,
    dtype: str,
    batch: int,
    speedup: float,
    rates: tuple[float, float] | None = None,
    onednn: OneDnnProbe | None = None,
    too_noisy: bool = False,
    call: SpeedCall | None = None,
) -> HardwareVerdict:
    """One run, no sweep yet: the flags and the one speedup measured (one size only).

    `call`: the run's own call (certainty.judge), the one its headline states: the sentence
    then says what it says, with a rough factor as rough; can't tell and too noisy state no
    speedup. Without it, `too_noisy` says the run could not tell.
    """
    verdict = hardware_verdict(
        env,
        dtype,
        "batch",
        [batch],
        [math.nan if too_noisy else speedup],
        onednn,
        context="in a single run",
        caveat="one size only; a sweep shows where the speedup crosses 1.0",
        rates=rates,
        noisy=int(too_noisy),
    )
    if call is None:
        return verdict
    measured = f"in a single run, {call_clause(call, batch)}"
    sentence = verdict.sentence.replace(verdict.measured, measured, 1)
    return verdict.model_copy(update={"measured": measured, "sentence": sentence})


def call_clause(call: SpeedCall, batch: int) -> str:
    """A run's call as the hardware verdict words it, the same call as the run's headline."""
    at = f"at batch {batch}"
    if call.kind == "noisy":
        return "too noisy to tell"
    if call.kind == "unclear":
        return f"can't tell whether autocast was faster {at}"
    if call.kind == "untimed":
        return "autocast was not timed"
    if call.kind == "same":
        return f"autocast and float32 ran at about the same speed {at}"
    if call.rough:
        return f"autocast ran {call.kind} {at}, about {rough_text(call.times)}× ({call.rough})"
    return f"autocast ran {_ratio(call.times)}× {call.kind} {at}"

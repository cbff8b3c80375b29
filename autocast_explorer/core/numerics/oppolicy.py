"""Live op-policy probe: what CPU autocast does to each common op, measured on the installed torch.

Each op runs under `torch.autocast("cpu", dtype)` (and no_grad) with float32 inputs, with
low-precision inputs, and, for ops that take several floating inputs, with mixed inputs (first
input low + the rest float32, and the reverse). The policy is derived from the output dtypes
observed, never looked up:

- `lower`:   float32 inputs give the autocast dtype (autocast casts them down and runs low).
- `fp32`:    low-precision inputs give float32 (autocast casts them up).
- `follows`: float32 → float32 and low → low (no autocast rule; the op keeps its input's dtype;
             with mixed inputs it keeps the first input's dtype).
- `promote`: like `follows` for equal dtypes, but mixed inputs give float32, the widest
             (ordinary type promotion).
- `error`:   the float32 or the low-precision case raised; the message is kept.
- `other`:   anything else (reported with the observed dtypes, never forced into a class).

`notes` compare the measurements with what people commonly believe: the CUDA float32 list
from the PyTorch AMP documentation, and the tutorial's claim that softmax and mean stay float32.
"""

from __future__ import annotations

import datetime as _dt
import warnings
from collections.abc import Sequence
from typing import Any

import torch
from torch.utils._pytree import tree_leaves

from autocast_explorer.core.hardware.cpu import environment
from autocast_explorer.core.numerics.documented import (
    TestLists,
    documented,
    installed_test_lists,
)
from autocast_explorer.core.numerics.opcatalog import (
    CATEGORIES,
    PROBED_OPS,
    OpSpec,
    category_slug,
)
from autocast_explorer.core.numerics.opnotes import (
    DOCUMENTED_PREFIX,
    TESTS_NOTE_SOURCE,
    belief_notes,
    documented_notes,
    documented_sources,
)
from autocast_explorer.core.numerics.opresult import (
    CASE_LABELS,
    CASES,
    POLICY_ORDER,
    SCHEMA,
    CaseResult,
    Note,
    OpPolicy,
    ProbeFormatError,
    ProbeResult,
    probe_schema,
)
from autocast_explorer.core.numerics.optrace import OpRecord, OpTracer
from autocast_explorer.core.runtime.autocast import TORCH_DTYPES
from autocast_explorer.core.runtime.dtypes import DTYPES, dtype_name
from autocast_explorer.core.runtime.errors import ConfigError, error_text
from autocast_explorer.core.runtime.progress import CancelFn, ProgressFn, Reporter
from autocast_explorer.core.runtime.threads import torch_threads, validate_threads

#: The probe's names, and those first defined here that moved to the document
#: (core.numerics.opresult), the notes (core.numerics.opnotes) and the catalog: the window, the
#: CLI and the run summary import them from here.
__all__ = [
    "CASE_LABELS",
    "CATEGORIES",
    "DISAGREEMENTS_GROUP",
    "DOCUMENTED_PREFIX",
    "MAX_KERNELS",
    "POLICY_ORDER",
    "PROBED_OPS",
    "PROBE_THREADS",
    "SCHEMA",
    "TESTS_NOTE_SOURCE",
    "CaseResult",
    "Note",
    "OpPolicy",
    "OpSpec",
    "ProbeFormatError",
    "ProbeResult",
    "case_dtypes",
    "classify",
    "computed_dtype",
    "grouped_ops",
    "op_matches",
    "probe_op",
    "probe_ops",
    "probe_schema",
    "run_case",
    "select_specs",
]

#: The group that "disagreements first" puts on top.
DISAGREEMENTS_GROUP = "disagreements"


_COMPLEX_REAL: dict[torch.dtype, str] = {
    torch.complex32: "float16",
    torch.complex64: "float32",
    torch.complex128: "float64",
}
_FLOATING = ("float16", "bfloat16", "float32", "float64")
#: Kernels kept per case (the first ones dispatched): enough to say which op was reached.
MAX_KERNELS = 12


def _result_tensor(value: Any) -> torch.Tensor | None:
    """The op's main result: its first floating or complex tensor, else its first tensor."""
    tensors = [v for v in tree_leaves(value) if isinstance(v, torch.Tensor)]
    for t in tensors:
        if t.is_floating_point() or t.is_complex():
            return t
    return tensors[0] if tensors else None


def _widest(names: Sequence[str]) -> str:
    dtype = getattr(torch, names[0])
    for name in names[1:]:
        dtype = torch.promote_types(dtype, getattr(torch, name))
    return dtype_name(dtype)


def computed_dtype(out: torch.Tensor, records: Sequence[OpRecord]) -> str | None:
    """The dtype the op computed in when its output's dtype does not say (else None).

    A complex result computed in its real counterpart (complex64: float32). A bool or integer
    result (comparisons, matrix rank) computed in the dtype its first floating kernel received
    (casts aside): the widest floating input of that kernel, as TensorIterator promotes them.
    """
    if out.is_floating_point():
        return None
    if out.is_complex():
        return _COMPLEX_REAL.get(out.dtype)
    for record in records:
        floats = [d for d in record.in_dtypes if d in _FLOATING]
        if not record.cast and floats:
            return _widest(floats)
    return None


def _kernel_names(records: Sequence[OpRecord]) -> tuple[str, ...]:
    """'aten.addmm.default' → 'addmm', casts left out, each once, in dispatch order."""
    names = dict.fromkeys(
        r.op.removeprefix("aten.").rsplit(".", 1)[0] for r in records if not r.cast
    )
    return tuple(names)[:MAX_KERNELS]


def case_dtypes(inputs: Sequence[torch.Tensor], case: str, low: torch.dtype) -> list[torch.dtype]:
    """The dtype of each input in `case`: floating inputs per the case, the rest unchanged."""
    dtypes = [t.dtype for t in inputs]
    floating = [i for i, t in enumerate(inputs) if t.is_floating_point()]
    for rank, i in enumerate(floating):
        first = rank == 0
        dtypes[i] = {
            "float32": torch.float32,
            "low": low,
            "low_first": low if first else torch.float32,
            "float32_first": torch.float32 if first else low,
        }[case]
    return dtypes


def run_case(spec: OpSpec, case: str, low: torch.dtype, seed: int = 0) -> CaseResult:
    """Run `spec` under autocast(low) with the inputs of `case`; errors are caught and kept."""
    inputs = spec.inputs(torch.Generator().manual_seed(seed))
    dtypes = case_dtypes(inputs, case, low)
    tensors = [t.to(d) for t, d in zip(inputs, dtypes, strict=True)]
    in_dtypes = tuple(dtype_name(d) for d in dtypes)
    tracer = OpTracer(case)
    try:
        # Deprecated ops on the lists (torch.cholesky, torch.lu_solve…) warn; the probe calls
        # them on purpose, so their warnings are noise here.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.no_grad(), torch.autocast("cpu", dtype=low), tracer:
                out = _result_tensor(spec.call(*tensors))
    except Exception as exc:  # an op unsupported for a dtype must be reported, not crash
        return CaseResult(
            case=case,
            in_dtypes=in_dtypes,
            out_dtype=None,
            computed=None,
            error=error_text(exc),
            casts=tracer.casts().count,
            kernels=_kernel_names(tracer.records),
        )
    return CaseResult(
        case=case,
        in_dtypes=in_dtypes,
        out_dtype=dtype_name(out.dtype) if out is not None else None,
        computed=None if out is None else computed_dtype(out, tracer.records),
        error=None,
        casts=tracer.casts().count,
        kernels=_kernel_names(tracer.records),
    )


def _casts(n: int) -> str:
    return f"{n} cast" if n == 1 else f"{n} casts"


def _first_floating(dtypes: Sequence[str]) -> str | None:
    return next((d for d in dtypes if d in _FLOATING), None)


def classify(cases: Sequence[CaseResult], low: str) -> tuple[str, str, str | None]:
    """(policy, why, error) from the observed cases; see the module docstring."""
    by = {c.case: c for c in cases}
    f32, lo = by["float32"], by["low"]
    for c in (f32, lo):
        if c.error is not None:
            return "error", f"raises with {CASE_LABELS[c.case]}: {c.error}", c.error
    mixed = [by[k] for k in ("low_first", "float32_first") if k in by]
    mixed_ok = [c for c in mixed if c.error is None]
    f_out, l_out = f32.effective, lo.effective
    if f_out == low and l_out == low:
        return (
            "lower",
            f"float32 inputs are cast to {low} ({_casts(f32.casts)}); the op runs in {low}",
            None,
        )
    if f_out == "float32" and l_out == "float32":
        return (
            "fp32",
            f"{low} inputs are cast to float32 ({_casts(lo.casts)}); the op runs in float32",
            None,
        )
    if f_out == "float32" and l_out == low:
        failed = [c for c in mixed if c.error is not None]
        caveat = "".join(f"; with {CASE_LABELS[c.case]} it raises: {c.error}" for c in failed)
        if mixed_ok and all(c.effective == "float32" for c in mixed_ok):
            return (
                "promote",
                f"no autocast rule: equal dtypes are kept, mixed {low}/float32 inputs give "
                f"float32, the widest (type promotion){caveat}",
                None,
            )
        if all(c.effective == _first_floating(c.in_dtypes) for c in mixed_ok):
            return (
                "follows",
                f"no autocast rule: float32 in → float32 out, {low} in → {low} out"
                + (", mixed inputs keep the first input's dtype" if mixed_ok else "")
                + caveat,
                None,
            )
    observed = ", ".join(f"{CASE_LABELS[c.case]} → {c.effective or 'error'}" for c in cases)
    return "other", f"observed: {observed}", None


def probe_op(spec: OpSpec, low: torch.dtype, tests: TestLists | None = None) -> OpPolicy:
    """All input cases of one op, classified, with what PyTorch documents for it."""
    inputs = spec.inputs(torch.Generator().manual_seed(0))
    floating = sum(1 for t in inputs if t.is_floating_point())
    names = CASES if floating >= 2 else CASES[:2]
    cases = tuple(run_case(spec, case, low) for case in names)
    policy, why, error = classify(cases, dtype_name(low))
    return OpPolicy(
        name=spec.name,
        policy=policy,
        by_case={c.case: c for c in cases},
        why=why,
        error=error,
        category=spec.category,
        documented=documented(spec.listed_name, tests),
    )


def select_specs(
    only: Sequence[str] = (), names: Sequence[str] = (), specs: Sequence[OpSpec] = PROBED_OPS
) -> tuple[OpSpec, ...]:
    """The specs in categories `only` (slugs) and/or named `names`; all when both are empty.

    Raises ConfigError naming the unknown category or op.
    """
    slugs = []
    for text in only:
        slug = category_slug(text)
        if slug is None:
            raise ConfigError(
                "only", f"unknown category {text!r} (choose from {', '.join(CATEGORIES)})"
            )
        slugs.append(slug)
    known = {spec.name for spec in specs}
    for name in names:
        if name not in known:
            wanted = name.lower()
            close = sorted(
                (k for k in known if wanted in k.lower()),
                key=lambda k: (not k.lower().startswith(wanted), k),
            )[:5]
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise ConfigError("op", f"unknown op {name!r}{hint}")
    if not only and not names:
        return tuple(specs)
    return tuple(s for s in specs if s.category in slugs or s.name in names)


#: Torch threads for the probe unless told otherwise. Its ops are tiny, so more threads only
#: add OpenMP wake-ups; on a busy 2-core machine 2 threads made the probe 3-15× slower
#: (bench/op_probe.py).
PROBE_THREADS = 1


def probe_ops(
    dtype: str = "bfloat16",
    specs: Sequence[OpSpec] = PROBED_OPS,
    threads: int | None = PROBE_THREADS,
    progress: ProgressFn | None = None,
    cancel: CancelFn | None = None,
) -> ProbeResult:
    """Probe every op in `specs` under CPU autocast with `dtype`; cancel is checked per op.

    `threads=None` leaves torch's own thread count.
    """
    if dtype not in DTYPES:
        raise ConfigError("dtype", f"must be one of {', '.join(DTYPES)} (got {dtype!r})")
    validate_threads(threads)
    reporter = Reporter(progress, cancel)
    low = TORCH_DTYPES[dtype]
    tests = installed_test_lists()
    results = []
    with torch_threads(threads) as used:
        for index, spec in enumerate(specs):
            reporter.check()
            reporter.report(index / max(1, len(specs)), f"probing {spec.name}")
            results.append(probe_op(spec, low, tests))
    reporter.report(1.0, "done")
    return ProbeResult(
        schema_=SCHEMA,
        dtype=dtype,
        environment=environment(used),
        ops=tuple(results),
        notes=belief_notes(results, dtype) + documented_notes(results, dtype),
        created=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        sources=documented_sources(tests),
    )


def op_matches(op: OpPolicy, query: str) -> bool:
    """Does `op` match a filter? Every word must occur in its name, category, measured or
    documented policy (or be "disagree"/"!" for an op that contradicts its documentation)."""
    label = CATEGORIES.get(op.category, op.category)
    documented_policy = op.documented.policy if op.documented else ""
    haystack = " ".join((op.name, op.category, label, op.policy, documented_policy)).lower()
    for word in query.lower().split():
        if word in ("!", "disagree", "disagrees", "disagreement", "disagreements"):
            if not op.disagrees:
                return False
        elif word not in haystack:
            return False
    return True


def grouped_ops(
    ops: Sequence[OpPolicy], query: str = "", disagreements_first: bool = False
) -> list[tuple[str, list[OpPolicy]]]:
    """(group, ops) for a table: categories in CATEGORIES order, filtered by `query`; with
    `disagreements_first`, ops that contradict their documentation come first in their own
    group. Empty groups are left out."""
    order = {slug: i for i, slug in enumerate(CATEGORIES)}
    shown = [op for op in ops if op_matches(op, query)]
    groups: list[tuple[str, list[OpPolicy]]] = []
    if disagreements_first:
        first = [op for op in shown if op.disagrees]
        if first:
            groups.append((DISAGREEMENTS_GROUP, first))
        shown = [op for op in shown if not op.disagrees]
    by_category: dict[str, list[OpPolicy]] = {}
    for op in sorted(shown, key=lambda o: order.get(o.category, len(order))):
        by_category.setdefault(op.category, []).append(op)
    groups += list(by_category.items())
    return groups

"""The probe's notes: what people believe or PyTorch documents about an op, beside what was
measured here, and why the two differ.

Belief notes check common claims (the CUDA float32 list from the PyTorch AMP docs, the
tutorial's "softmax and mean stay in float32"); documented notes explain each op whose measured
policy contradicts PyTorch's own CPU lists, from what the probe observed.
"""

from __future__ import annotations

from collections.abc import Sequence

from autocast_explorer.core.numerics.documented import (
    DOCS_ORIGIN,
    TEST_LISTS_CLASS,
    UNLISTED,
    UNLISTED_MEANING,
    TestLists,
    documented,
)
from autocast_explorer.core.numerics.opresult import Note, OpPolicy

#: "CUDA Ops that can autocast to float32" from the PyTorch AMP docs (torch.amp, autocast op
#: reference). A claim about CUDA, used only to point out where CPU behaves differently.
CUDA_FLOAT32_LIST: frozenset[str] = frozenset(
    {
        "acos", "asin", "binary_cross_entropy_with_logits", "cosh", "cosine_embedding_loss",
        "cdist", "cosine_similarity", "cross_entropy", "cumprod", "cumsum", "dist", "erfinv",
        "exp", "expm1", "group_norm", "hinge_embedding_loss", "kl_div", "l1_loss", "layer_norm",
        "log", "log_softmax", "log10", "log1p", "log2", "margin_ranking_loss", "mse_loss",
        "multilabel_margin_loss", "multi_margin_loss", "nll_loss", "norm", "normalize", "pdist",
        "poisson_nll_loss", "pow", "prod", "reciprocal", "rsqrt", "sinh", "smooth_l1_loss",
        "soft_margin_loss", "softmax", "softmin", "softplus", "sum", "renorm", "tan",
        "triplet_margin_loss",
    }
)  # fmt: skip
CUDA_SOURCE = "PyTorch AMP docs: on CUDA this op is on autocast's float32 list"
#: The tutorial's words (shared/seed/autocast-on-cpu-tutorial.txt, "Some operations stay in
#: float32"): "Autocast keeps a short list of operations in float32 … Softmax and mean are on
#: that list."
TUTORIAL_FLOAT32: tuple[str, ...] = ("softmax", "mean")
TUTORIAL_SOURCE = "tutorial: 'Softmax and mean stay in float32 under CPU autocast'"


def _measured_words(op: OpPolicy, low: str) -> str:
    parts = []
    for case, label in (("float32", "float32"), ("low", low)):
        c = op.case(case)
        if c is not None:
            parts.append(f"{label} in → {c.out_dtype or 'error'}")
    return f"{'; '.join(parts)} (policy: {op.policy})"


def _float32_verdict(op: OpPolicy, low: str) -> tuple[str, bool]:
    """Does 'this op stays in float32 under autocast' hold for the measured op?"""
    if op.policy == "error":
        return "could not be checked: the op raised an error", False
    if op.policy == "fp32":
        return "holds", False
    if op.out("float32") == "float32" and op.out("low") == low:
        return (
            f"holds only for float32 inputs: given {low} input it returns {low} "
            "(the op follows its input; autocast does not force it to float32)",
            True,
        )
    return f"does not hold: float32 inputs give {op.out('float32')}", True


def belief_notes(ops: Sequence[OpPolicy], low: str) -> tuple[Note, ...]:
    """Notes for every probed op about which a common belief exists, with verdicts."""
    notes = []
    for op in ops:
        if op.name in TUTORIAL_FLOAT32:
            verdict, contradicts = _float32_verdict(op, low)
            notes.append(
                Note(
                    op=op.name,
                    source=TUTORIAL_SOURCE,
                    claim=f"{op.name} stays in float32 under CPU autocast",
                    measured=_measured_words(op, low),
                    verdict=verdict,
                    contradicts=contradicts,
                )
            )
        if op.name in CUDA_FLOAT32_LIST:
            verdict, contradicts = _float32_verdict(op, low)
            notes.append(
                Note(
                    op=op.name,
                    source=CUDA_SOURCE,
                    claim=f"{op.name} runs in float32 under autocast (true on CUDA)",
                    measured=_measured_words(op, low),
                    verdict=verdict if contradicts else "holds on this CPU too",
                    contradicts=contradicts,
                )
            )
    return tuple(notes)


#: Notes about what PyTorch documents start with this (the belief notes do not).
DOCUMENTED_PREFIX = "documented for CPU"
DOCS_NOTE_SOURCE = f"{DOCUMENTED_PREFIX}: the AMP docs' CPU lists"
TESTS_NOTE_SOURCE = f"{DOCUMENTED_PREFIX}: torch's own {TEST_LISTS_CLASS}"
#: The documented policies in words (the claim of a disagreement note).
DOCUMENTED_WORDS: dict[str, str] = {
    "lower": "autocasts to the low-precision dtype",
    "fp32": "autocasts to float32",
    "promote": "runs in the widest input type",
    UNLISTED: UNLISTED_MEANING,
}
#: Words in an error message that say the CPU lacks a kernel, and what that means.
_NO_KERNEL_HINTS = ("primitive descriptor", "not implemented for", "not supported")


def _reached(op: OpPolicy, kernel: str) -> bool:
    return any(kernel in c.kernels for c in op.cases)


def _other_explanation(op: OpPolicy, low: str) -> str:
    """Words for an op no policy fits, naming the pattern when it is the common one."""
    f32, lo = op.case("float32"), op.case("low")
    mixed = [c for c in (op.case("low_first"), op.case("float32_first")) if c is not None]
    equal_kept = (
        f32 is not None
        and lo is not None
        and (f32.effective, lo.effective)
        == (
            "float32",
            low,
        )
    )
    rest = {"low_first": "float32", "float32_first": low}
    if equal_kept and mixed and all(c.effective == rest[c.case] for c in mixed):
        return (
            "equal input dtypes are kept (as the docs say of unlisted ops), but with mixed "
            "inputs the result takes the dtype of the inputs after the first (for a recurrent "
            f"layer: its weights and state), neither the first input's nor the widest: {op.why}"
        )
    return f"none of the policies fits what it returned: {op.why}"


def disagreement_explanation(op: OpPolicy, low: str) -> str:
    """Why the measured policy differs from the documented one, from what was observed."""
    doc = op.documented
    assert doc is not None
    listed = doc.name
    if op.policy == "error":
        hint = ""
        if op.error and any(h in op.error for h in _NO_KERNEL_HINTS):
            hint = f" (no {low} kernel for it on this CPU with this torch)"
        return f"it raises here{hint}, so the documented policy cannot run: {op.error}"
    if op.policy == "other":
        return _other_explanation(op, low)
    if doc.policy in ("lower", "fp32") and op.policy in ("follows", "promote"):
        if _reached(op, listed):
            return (
                f"aten.{listed} was dispatched but autocast did not cast its inputs; "
                f"measured: {op.why}"
            )
        seen = ", ".join(op.cases[0].kernels[:4]) or "nothing"
        return (
            f"this call never reaches the listed aten.{listed} under autocast (it dispatched "
            f"{seen}), so autocast has nothing to cast; measured: {op.why}"
        )
    if doc.policy == UNLISTED:
        listed_kernels = [
            k
            for k in op.cases[0].kernels
            if documented(k).policy in ("lower", "fp32") and k != listed
        ]
        if listed_kernels:
            return (
                f"not listed itself, but it is built from aten.{listed_kernels[0]}, which is, "
                f"so autocast casts there; measured: {op.why}"
            )
        return f"not listed, yet autocast changed its dtype; measured: {op.why}"
    return f"measured the opposite: {op.why}"


def documented_notes(ops: Sequence[OpPolicy], low: str) -> tuple[Note, ...]:
    """One note per op whose measurement contradicts what PyTorch documents, with the reason.

    Also a note where the docs and torch's test lists disagree with each other.
    """
    notes = []
    for op in ops:
        doc = op.documented
        if doc is None:
            continue
        if op.disagrees:
            source = TESTS_NOTE_SOURCE if doc.tests is not None else DOCS_NOTE_SOURCE
            notes.append(
                Note(
                    op=op.name,
                    source=source,
                    claim=f"{doc.name} {DOCUMENTED_WORDS.get(doc.policy, doc.policy)}",
                    measured=_measured_words(op, low),
                    verdict=disagreement_explanation(op, low),
                    contradicts=True,
                )
            )
        if doc.sources_disagree():
            notes.append(
                Note(
                    op=op.name,
                    source=DOCS_NOTE_SOURCE,
                    claim=f"{doc.name} {DOCUMENTED_WORDS.get(doc.docs or '', doc.docs)}",
                    measured=_measured_words(op, low),
                    verdict=f"torch's test lists expect {doc.tests} instead (they are checked "
                    "against this torch, so the table uses theirs)",
                    contradicts=not op.disagrees,
                )
            )
    return tuple(notes)


def documented_sources(tests: TestLists) -> dict[str, str]:
    """Where the documented column comes from, stated once per probe."""
    if tests.problem:
        origin = f"torch {tests.torch_version} {TEST_LISTS_CLASS}: {tests.problem}"
    else:
        origin = f"torch {tests.torch_version} {TEST_LISTS_CLASS}, read from {tests.path}"
    return {"docs": DOCS_ORIGIN, "tests": origin}

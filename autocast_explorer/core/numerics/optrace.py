"""Every aten op one forward dispatches, with dtypes and shapes, and the casts autocast inserts.

Mechanism: a `TorchDispatchMode` (`OpTracer`) sees each op at the Python dispatch key, i.e.
*below* the Autocast key, so it sees the casts autocast inserts before an op and the dtypes the
op really ran in. What it sees depends on the grad mode (measured with torch 2.13, see
tests/core/test_optrace.py, which fails if a new torch changes this):

- under `torch.no_grad`, composite ops are already decomposed when they reach the mode: casts
  appear as `aten._to_copy.default`, a Linear as `aten.t` + `aten.addmm`; `aten.to` and
  `aten.linear` are never seen.
- under `torch.inference_mode`, the composites arrive whole: casts appear as `aten.to.dtype`,
  a Linear as `aten.linear.default`; `aten._to_copy`, `aten.t` and `aten.addmm` are never seen.

Either way every cast autocast inserts around an op the mode sees is seen exactly once, with the
same count and bytes; the casts inside an op that arrives whole are not (an `nn.GRU`'s weights
under inference_mode: `aten.gru.input` is one op). The mode re-runs each op under the autocast it
was called in (`_autocast_as_called`), so such an op computes as it does without the tracer.

A cast is an op from CAST_OPS whose output dtype differs from one of its tensor inputs; its
`bytes` are the bytes it wrote (the new copy), `bytes_read` those of the tensor it converted.

Reusable: `with OpTracer() as t: model(x)` then `t.records` / `t.casts()`; or `count_casts(fn)`.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, NamedTuple

import torch
from pydantic import BeforeValidator, Field
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from autocast_explorer.core.documents.field_types import (
    Flag,
    Text,
    Texts,
    Whole,
    WholeMap,
    Wholes,
    refuse,
    whole_rules,
)
from autocast_explorer.core.documents.model import Part, build, dump, read
from autocast_explorer.core.runtime.autocast import autocast_context
from autocast_explorer.core.runtime.dtypes import dtype_name
from autocast_explorer.core.runtime.wrapping import wrapped_forwards

#: Op packets that convert a tensor's dtype when input and output dtypes differ.
CAST_OPS: frozenset[str] = frozenset(
    {
        "aten._to_copy",
        "aten.to",
        "aten.copy_",
        "aten.copy",
        "aten._copy_from",
        "aten._copy_from_and_resize",
        "aten.type_as",
        "prims.convert_element_type",
    }
)
GRAD_MODES: tuple[str, ...] = ("no_grad", "inference_mode")


def _mode(value: Any) -> Any:
    if value not in ("plain", "autocast"):
        raise refuse("expected 'plain' or 'autocast'")
    return value


class OpRecordPart(Part):
    """One entry of the result's `ops`: an aten op of one forward."""

    mode: Annotated[Literal["plain", "autocast"], BeforeValidator(_mode)]
    op: Annotated[Text, Field(description="aten op, e.g. aten.addmm.default")]
    in_dtypes: Texts = Field(alias="in")
    out_dtypes: Texts = Field(alias="out")
    shape: Wholes
    in_shapes: tuple[Wholes, ...] = ()
    cast: Flag
    bytes: Whole = 0
    bytes_read: Whole = 0
    source: Annotated[
        Text,
        Field(
            description="for a cast of a model parameter: the parameter it converted, by its path "
            "in the model (fc1.weight, encoder.layer.0.attention.self.query.weight); older files "
            "held its class here (Linear.weight)"
        ),
    ] = ""
    source_kind: Annotated[
        Text,
        Field(
            description="that parameter by its module's class, e.g. Linear.weight (absent in older "
            "files)"
        ),
    ] = ""
    module: Annotated[
        Text,
        Field(description="the innermost layer whose forward dispatched it (absent: the model)"),
    ] = ""


class CastSummaryPart(Part):
    """The casts of one forward: how many, their bytes, by op and by what they converted."""

    count: Whole
    bytes: Annotated[Whole, Field(description="bytes of the low-precision copies written")]
    bytes_read: Whole = 0
    by_op: WholeMap = Field(default_factory=dict)
    by_source: Annotated[
        WholeMap,
        Field(
            description="casts of model parameters by the parameter's path in the model, e.g. "
            "conv1.weight (older files: by its class, e.g. Conv2d.weight)"
        ),
    ] = Field(default_factory=dict)
    by_kind: Annotated[
        WholeMap,
        Field(
            description="the same casts by the module's class and parameter, e.g. Conv2d.weight "
            "(absent in older files)"
        ),
    ] = Field(default_factory=dict)
    grad_mode: Text = "no_grad"


class OpCountPart(Part):
    """One entry of `ops_diff`: how often an op ran in each mode."""

    op: Text
    plain: Whole
    autocast: Whole
    added: Annotated[int, *whole_rules(ge=None)] = 0


#: The four top-level sections of a result that hold an OpTrace (their types, written once).
OpsSection = Annotated[
    tuple[OpRecordPart, ...], Field(description="the aten ops of one forward per mode")
]
OpsDiffSection = tuple[OpCountPart, ...]
CastsByGradMode = dict[str, CastSummaryPart]


class OpTracePart(Part):
    """An OpTrace's sections on their own (the result document holds the same keys)."""

    ops: OpsSection
    casts: CastSummaryPart
    ops_diff: OpsDiffSection = ()
    casts_by_grad_mode: CastsByGradMode = Field(default_factory=dict)


@dataclass(frozen=True)
class OpRecord:
    """One dispatched aten op: its dtypes and shapes, and whether it was a dtype cast."""

    mode: str
    op: str
    in_dtypes: tuple[str, ...]
    out_dtypes: tuple[str, ...]
    shape: tuple[int, ...]
    in_shapes: tuple[tuple[int, ...], ...] = ()
    cast: bool = False
    bytes: int = 0
    bytes_read: int = 0
    source: str = ""  # a cast of a model parameter: its path, 'conv1.weight', 'gru.weight_hh_l0'
    module: str = ""  # the innermost layer running when it was dispatched ('' for the model)
    source_kind: str = ""  # that parameter by its module's class: 'Conv2d.weight'

    def to_dict(self) -> dict[str, Any]:
        return dump(self.to_part())

    def to_part(self) -> OpRecordPart:
        extra: dict[str, Any] = {"source": self.source} if self.source else {}
        if self.source_kind:
            extra["source_kind"] = self.source_kind
        if self.module:
            extra["module"] = self.module
        return build(
            OpRecordPart,
            mode=self.mode,
            op=self.op,
            in_dtypes=self.in_dtypes,
            out_dtypes=self.out_dtypes,
            shape=self.shape,
            in_shapes=self.in_shapes,
            cast=self.cast,
            bytes=self.bytes,
            bytes_read=self.bytes_read,
            **extra,
        )

    @classmethod
    def from_part(cls, part: OpRecordPart) -> OpRecord:
        return cls(**{name: getattr(part, name) for name in OpRecordPart.model_fields})


@dataclass(frozen=True)
class CastSummary:
    """How many dtype casts one forward dispatched, the bytes they wrote/read, by op name."""

    count: int
    bytes: int
    bytes_read: int
    by_op: dict[str, int] = field(default_factory=dict)
    #: Casts of model parameters by the parameter's path ('conv1.weight': 1, …); the rest of
    #: `count` cast activations (the input, or a tensor between layers).
    by_source: dict[str, int] = field(default_factory=dict)
    #: The same casts by module class and parameter ('Conv2d.weight': 2, …); empty in older
    #: results, whose `by_source` held these labels.
    by_kind: dict[str, int] = field(default_factory=dict)

    @property
    def parameter_casts(self) -> int:
        return sum(self.by_source.values())

    def to_dict(self) -> dict[str, Any]:
        return dump(self.to_part())

    def to_part(self, **grad_mode: str) -> CastSummaryPart:
        return build(
            CastSummaryPart,
            count=self.count,
            bytes=self.bytes,
            bytes_read=self.bytes_read,
            by_op=dict(self.by_op),
            by_source=dict(self.by_source),
            **({"by_kind": dict(self.by_kind)} if self.by_kind else {}),
            **grad_mode,
        )

    @classmethod
    def from_part(cls, part: CastSummaryPart) -> CastSummary:
        return cls(
            part.count, part.bytes, part.bytes_read, part.by_op, part.by_source, part.by_kind
        )


@dataclass(frozen=True)
class OpCount:
    """One row of the side-by-side view: how often an op ran in each mode."""

    op: str
    plain: int
    autocast: int

    @property
    def added(self) -> int:
        """Calls autocast added (negative: calls it removed)."""
        return self.autocast - self.plain

    def to_dict(self) -> dict[str, Any]:
        return dump(self.to_part())

    def to_part(self) -> OpCountPart:
        return build(
            OpCountPart, op=self.op, plain=self.plain, autocast=self.autocast, added=self.added
        )


@dataclass(frozen=True)
class OpTrace:
    """The ops of one plain and one autocast forward, and the casts autocast added.

    `casts_by_grad_mode` holds the autocast forward's casts seen under each grad mode (the
    visibility check described in the module docstring); `casts` is the one under `grad_mode`.
    """

    grad_mode: str
    plain: tuple[OpRecord, ...]
    autocast: tuple[OpRecord, ...]
    casts: CastSummary
    counts: tuple[OpCount, ...]
    casts_by_grad_mode: dict[str, CastSummary] = field(default_factory=dict)
    #: Mode → layer name → the dtype the layer returned in the traced forward (not saved: a
    #: fused kernel can run differently under the tracer, see `trace_forward`).
    layer_outputs: dict[str, dict[str, str]] = field(default_factory=dict, compare=False)

    @property
    def added(self) -> tuple[OpCount, ...]:
        """Ops autocast dispatched more often than the plain forward ("what autocast added")."""
        return tuple(c for c in self.counts if c.added > 0)

    @property
    def records(self) -> tuple[OpRecord, ...]:
        return self.plain + self.autocast

    #: Top-level keys of the result JSON that hold an OpTrace.
    JSON_KEYS = ("ops", "casts", "ops_diff", "casts_by_grad_mode")

    def to_dict(self) -> dict[str, Any]:
        """The result JSON's sections: `ops`, `casts` (autocast forward), `ops_diff`, …"""
        return dump(self.to_part())

    def to_part(self) -> OpTracePart:
        return build(OpTracePart, **self.sections())

    def sections(self) -> dict[str, Any]:
        """The four sections as parts, by key (the result document holds them at its top)."""
        return {
            "ops": tuple(r.to_part() for r in self.records),
            "casts": self.casts.to_part(grad_mode=self.grad_mode),
            "ops_diff": tuple(c.to_part() for c in self.counts),
            "casts_by_grad_mode": {m: c.to_part() for m, c in self.casts_by_grad_mode.items()},
        }

    @classmethod
    def from_dict(cls, data: Any) -> OpTrace:
        """Inverse of to_dict (DocumentFormatError naming the first bad field)."""
        return cls.from_part(read(OpTracePart, data))

    @classmethod
    def from_part(cls, part: Any) -> OpTrace:
        """From any part holding the four sections (OpTracePart, the result document)."""
        records = [OpRecord.from_part(r) for r in part.ops]
        return cls(
            grad_mode=part.casts.grad_mode,
            plain=tuple(r for r in records if r.mode == "plain"),
            autocast=tuple(r for r in records if r.mode == "autocast"),
            casts=CastSummary.from_part(part.casts),
            counts=tuple(OpCount(c.op, c.plain, c.autocast) for c in part.ops_diff),
            casts_by_grad_mode={
                m: CastSummary.from_part(c) for m, c in part.casts_by_grad_mode.items()
            },
        )


def _tensors(value: Any) -> list[torch.Tensor]:
    return [t for t in tree_leaves(value) if isinstance(t, torch.Tensor)]


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


class ParamSource(NamedTuple):
    """A parameter as a cast's source: its path in the model and its module's class."""

    path: str  # 'encoder.layer.0.attention.self.query.weight'
    kind: str  # 'Linear.weight'


def parameter_sources(model: torch.nn.Module) -> dict[int, ParamSource]:
    """Storage address → the parameter's path and 'ModuleKind.parameter', for every parameter.

    Lets a cast be attributed to what it converted: which convolution's weight, which
    attention projection, which recurrent weight. A shared parameter keeps its first path.
    """
    sources: dict[int, ParamSource] = {}
    for module_path, module in model.named_modules():
        for name, param in module.named_parameters(recurse=False):
            path = f"{module_path}.{name}" if module_path else name
            kind = f"{type(module).__name__}.{name}"
            sources.setdefault(param.data_ptr(), ParamSource(path, kind))
    return sources


def make_record(
    mode: str,
    op: str,
    inputs: list[torch.Tensor],
    outputs: list[torch.Tensor],
    sources: dict[int, ParamSource] | None = None,
    module: str = "",
) -> OpRecord:
    """An OpRecord for one dispatched op (shared by the tracer and tests)."""
    out = outputs[0] if outputs else None
    cast = False
    written = read = 0
    label = ParamSource("", "")
    if out is not None and op.rsplit(".", 1)[0] in CAST_OPS:
        source = next((t for t in inputs if t.dtype != out.dtype), None)
        if source is not None:
            cast = True
            written, read = _nbytes(out), _nbytes(source)
            if sources:
                label = sources.get(source.data_ptr(), label)
    return OpRecord(
        mode=mode,
        op=op,
        in_dtypes=tuple(dtype_name(t.dtype) for t in inputs),
        out_dtypes=tuple(dtype_name(t.dtype) for t in outputs),
        shape=tuple(out.shape) if out is not None else (),
        in_shapes=tuple(tuple(t.shape) for t in inputs),
        cast=cast,
        bytes=written,
        bytes_read=read,
        source=label.path,
        module=module,
        source_kind=label.kind,
    )


@contextlib.contextmanager
def _autocast_as_called(inputs: list[torch.Tensor]) -> Iterator[None]:
    """Autocast on again, for the inputs' devices where it was on when the op was called.

    A mode runs with every dispatch key above Python excluded, autocast's among them, so an op
    it re-runs would run the ops inside it without autocast. An op autocast let through whole
    (aten.gru.input under inference_mode, the fused encoder kernel) needs autocast for those:
    its matrix products would meet a bfloat16 input and float32 weights and raise, or run in
    float32 where the untraced forward ran them in bfloat16. Autocast's ops are not changed:
    their inputs are already cast, and casting again casts nothing.

    Only without grad (no_grad, inference_mode): only there does an op arrive whole. With grad,
    composite ops arrive decomposed, and re-running an op under autocast there changed what
    autograd had saved for backward (a BERT training step's bmm met float32 and bfloat16).
    """
    if torch.is_grad_enabled():
        yield
        return
    devices = {t.device.type for t in inputs if torch.amp.is_autocast_available(t.device.type)}
    with torch.overrides.enable_reentrant_dispatch():  # the dispatch state the op was called in
        devices = {device for device in devices if torch.is_autocast_enabled(device)}
    for device in devices:
        torch.set_autocast_enabled(device, True)
    try:
        yield
    finally:
        for device in devices:
            torch.set_autocast_enabled(device, False)


class OpTracer(TorchDispatchMode):
    """Record every aten op dispatched while active (`with OpTracer("autocast") as t: …`).

    `stack`, when given, is the list of layer names whose forwards are running (innermost
    last, kept by `trace_forward`): each op is attributed to its last entry.
    """

    def __init__(
        self,
        mode: str = "",
        sources: dict[int, ParamSource] | None = None,
        stack: list[str] | None = None,
    ) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.mode = mode
        self.sources = sources
        self.stack = stack if stack is not None else []
        self.records: list[OpRecord] = []

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # torch wraps a mode's __torch_dispatch__ to keep torch.compile out of it, and that
        # wrapper imports torch._dynamo on first use: ~1 s per process, for nothing here
        # (the tracer never compiles). Opting out keeps a traced `run` about 1 s faster.
        return False

    def __torch_dispatch__(
        self,
        func: torch._ops.OpOverload,
        types: Sequence[type],
        args: Sequence[Any] = (),
        kwargs: Mapping[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        inputs = _tensors((args, kwargs))
        with _autocast_as_called(inputs):
            out = func(*args, **kwargs)
        self.records.append(
            make_record(
                self.mode,
                str(func),
                inputs,
                _tensors(out),
                self.sources,
                self.stack[-1] if self.stack else "",
            )
        )
        return out

    def casts(self) -> CastSummary:
        return cast_summary(self.records)


def cast_summary(records: tuple[OpRecord, ...] | list[OpRecord]) -> CastSummary:
    casts = [r for r in records if r.cast]
    return CastSummary(
        count=len(casts),
        bytes=sum(r.bytes for r in casts),
        bytes_read=sum(r.bytes_read for r in casts),
        by_op=dict(Counter(r.op for r in casts)),
        by_source=dict(Counter(r.source for r in casts if r.source)),
        by_kind=dict(Counter(r.source_kind for r in casts if r.source_kind)),
    )


def count_casts(
    fn: Callable[[], object], sources: dict[int, ParamSource] | None = None
) -> CastSummary:
    """Call `fn()` once under an OpTracer and summarise the casts it dispatched."""
    tracer = OpTracer(sources=sources)
    with tracer:
        fn()
    return tracer.casts()


def op_counts(plain: tuple[OpRecord, ...], auto: tuple[OpRecord, ...]) -> tuple[OpCount, ...]:
    """Per op name, calls in each forward; ops in first-seen order (plain first)."""
    p = Counter(r.op for r in plain)
    a = Counter(r.op for r in auto)
    names = list(dict.fromkeys([r.op for r in plain] + [r.op for r in auto]))
    return tuple(OpCount(op=n, plain=p[n], autocast=a[n]) for n in names)


def _grad_context(grad_mode: str) -> contextlib.AbstractContextManager[object]:
    if grad_mode == "no_grad":
        return torch.no_grad()
    if grad_mode == "inference_mode":
        return torch.inference_mode()
    raise ValueError(f"grad_mode must be one of {', '.join(GRAD_MODES)} (got {grad_mode!r})")


def trace_forward(
    model: torch.nn.Module,
    x: torch.Tensor,
    autocast_dtype: torch.dtype | None,
    grad_mode: str = "no_grad",
    outputs: dict[str, str] | None = None,
) -> tuple[OpRecord, ...]:
    """The ops of one forward entering `grad_mode` and (with a dtype) one autocast region,
    each attributed to the layer whose forward dispatched it.

    `outputs`, when given, receives each layer's output dtype in this traced forward: the
    untraced forward's, since the tracer runs each op under the autocast it was called in
    (`_autocast_as_called`; torch's fused encoder kernel returned float32 here before it did).
    """
    label = "plain" if autocast_dtype is None else "autocast"
    sources = parameter_sources(model)
    stack: list[str] = []

    def around(name: str, _module: object, run: Callable[[], object], *_call: object) -> object:
        stack.append(name)
        try:
            output = run()
        finally:
            stack.pop()
        first = next(iter(_tensors(output)), None)
        if outputs is not None and first is not None:
            outputs[name] = dtype_name(first.dtype)
        return output

    tracer = OpTracer(label, sources, stack)
    with (
        _grad_context(grad_mode),
        autocast_context(autocast_dtype),
        wrapped_forwards(model, around),
        tracer,
    ):
        model(x)
    return tuple(tracer.records)


def trace_model(
    model: torch.nn.Module,
    x: torch.Tensor,
    autocast_dtype: torch.dtype,
    grad_mode: str = "no_grad",
    check_grad_modes: bool = True,
    check: Callable[[], None] = lambda: None,
) -> OpTrace:
    """Trace one plain and one autocast forward; optionally the autocast casts in every mode.

    `check` runs before each traced forward (it raises to cancel): a traced forward is slow,
    every op passing through Python, so a cancel waits for one of them at most.
    """
    outputs: dict[str, dict[str, str]] = {"plain": {}, "autocast": {}}
    check()
    plain = trace_forward(model, x, None, grad_mode, outputs["plain"])
    check()
    auto = trace_forward(model, x, autocast_dtype, grad_mode, outputs["autocast"])
    casts = cast_summary(auto)
    by_mode = {grad_mode: casts}
    if check_grad_modes:
        for other in GRAD_MODES:
            if other not in by_mode:
                check()
                by_mode[other] = cast_summary(trace_forward(model, x, autocast_dtype, other))
    return OpTrace(
        grad_mode=grad_mode,
        plain=plain,
        autocast=auto,
        casts=casts,
        counts=op_counts(plain, auto),
        casts_by_grad_mode=by_mode,
        layer_outputs=outputs,
    )

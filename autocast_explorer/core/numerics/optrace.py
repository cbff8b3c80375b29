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
from typing import Annotated, Any, ClassVar, NamedTuple

import torch
from pydantic import AfterValidator, Field, WithJsonSchema, model_validator
from pydantic.json_schema import SkipJsonSchema
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
from autocast_explorer.core.documents.model import Part, dump, read
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


#: The labels of a result's two traced forwards (an OpRecord's `mode` in a file).
FORWARDS = ("plain", "autocast")


def _unless_empty() -> Any:
    """A key written only when not empty (older readers expect it absent)."""
    return Field(exclude_if=lambda value: not value)


class OpRecord(Part):
    """One entry of the result's `ops`: an aten op of one forward."""

    # One dispatched aten op: its dtypes and shapes, and whether it was a dtype cast. `mode` is
    # the tracer's label: a result's forwards are "plain" and "autocast" (OpsSection checks).
    mode: Annotated[Text, WithJsonSchema({"enum": list(FORWARDS), "type": "string"})]
    op: Annotated[Text, Field(description="aten op, e.g. aten.addmm.default")]
    in_dtypes: Annotated[Texts, Field(alias="in")]
    out_dtypes: Annotated[Texts, Field(alias="out")]
    shape: Wholes
    in_shapes: tuple[Wholes, ...] = ()
    cast: Flag
    bytes: Whole = 0
    bytes_read: Whole = 0
    source: Annotated[
        Text,
        _unless_empty(),
        Field(
            description="for a cast of a model parameter: the parameter it converted, by its path "
            "in the model (fc1.weight, encoder.layer.0.attention.self.query.weight); older files "
            "held its class here (Linear.weight)"
        ),
    ] = ""
    source_kind: Annotated[
        Text,
        _unless_empty(),
        Field(
            description="that parameter by its module's class, e.g. Linear.weight (absent in older "
            "files)"
        ),
    ] = ""
    module: Annotated[
        Text,
        _unless_empty(),
        Field(description="the innermost layer whose forward dispatched it (absent: the model)"),
    ] = ""

    def to_dict(self) -> dict[str, Any]:
        return dump(self)


def _of_both_forwards(records: tuple[OpRecord, ...]) -> tuple[OpRecord, ...]:
    for i, record in enumerate(records):
        if record.mode not in FORWARDS:
            raise refuse("expected 'plain' or 'autocast'", at=f"[{i}].mode")
    return records


class CastSummary(Part):
    """The casts of one forward: how many, their bytes, by op and by what they converted."""

    count: Whole
    bytes: Annotated[Whole, Field(description="bytes of the low-precision copies written")]
    bytes_read: Whole = 0
    by_op: WholeMap = Field(default_factory=dict)
    #: Casts of model parameters by the parameter's path ('conv1.weight': 1, …); the rest of
    #: `count` cast activations (the input, or a tensor between layers).
    by_source: Annotated[
        WholeMap,
        Field(
            description="casts of model parameters by the parameter's path in the model, e.g. "
            "conv1.weight (older files: by its class, e.g. Conv2d.weight)"
        ),
    ] = Field(default_factory=dict)
    #: The same casts by module class and parameter ('Conv2d.weight': 2, …); empty in older
    #: results, whose `by_source` held these labels.
    by_kind: Annotated[
        WholeMap,
        _unless_empty(),
        Field(
            description="the same casts by the module's class and parameter, e.g. Conv2d.weight "
            "(absent in older files)"
        ),
    ] = Field(default_factory=dict)
    #: The grad mode it was traced under: written in a result's `casts` only.
    grad_mode: Text = "no_grad"

    @property
    def parameter_casts(self) -> int:
        return sum(self.by_source.values())

    def to_dict(self) -> dict[str, Any]:
        return dump(self)


class OpCount(Part):
    """One entry of `ops_diff`: how often an op ran in each mode."""

    op: Text
    plain: Whole
    autocast: Whole
    #: Calls autocast added (negative: calls it removed): computed when not given.
    added: Annotated[int, *whole_rules(ge=None)] = 0

    @model_validator(mode="before")
    @classmethod
    def _added_from_counts(cls, data: Any) -> Any:
        if isinstance(data, dict) and "added" not in data:
            plain, autocast = data.get("plain"), data.get("autocast")
            if isinstance(plain, int) and isinstance(autocast, int):
                data = {**data, "added": autocast - plain}
        return data

    def to_dict(self) -> dict[str, Any]:
        return dump(self)


#: The four top-level sections of a result that hold an OpTrace (their types, written once).
OpsSection = Annotated[
    tuple[OpRecord, ...],
    AfterValidator(_of_both_forwards),
    Field(description="the aten ops of one forward per mode"),
]
OpsDiffSection = tuple[OpCount, ...]
CastsByGradMode = dict[str, CastSummary]


class OpTrace(Part):
    """The ops of one plain and one autocast forward, and the casts autocast added: the four
    sections a result document holds at its top (JSON_KEYS).

    `casts_by_grad_mode` holds the autocast forward's casts seen under each grad mode (the
    visibility check described in the module docstring); `casts` is the one under `grad_mode`.
    """

    ops: OpsSection
    casts: CastSummary
    ops_diff: OpsDiffSection = ()
    casts_by_grad_mode: CastsByGradMode = Field(default_factory=dict)
    #: Mode → layer name → the dtype the layer returned in the traced forward (neither written
    #: nor compared: a fused kernel can run differently under the tracer, see `trace_forward`).
    layer_outputs: Annotated[
        dict[str, dict[str, str]], SkipJsonSchema(), Field(exclude=True, repr=False)
    ] = Field(default_factory=dict)

    #: Top-level keys of the result JSON that hold an OpTrace.
    JSON_KEYS: ClassVar[tuple[str, ...]] = ("ops", "casts", "ops_diff", "casts_by_grad_mode")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, OpTrace):
            return NotImplemented
        return self.sections() == other.sections()

    @property
    def grad_mode(self) -> str:
        return self.casts.grad_mode

    @property
    def plain(self) -> tuple[OpRecord, ...]:
        return tuple(r for r in self.ops if r.mode == "plain")

    @property
    def autocast(self) -> tuple[OpRecord, ...]:
        return tuple(r for r in self.ops if r.mode == "autocast")

    @property
    def records(self) -> tuple[OpRecord, ...]:
        return self.ops

    @property
    def counts(self) -> tuple[OpCount, ...]:
        return self.ops_diff

    @property
    def added(self) -> tuple[OpCount, ...]:
        """Ops autocast dispatched more often than the plain forward ("what autocast added")."""
        return tuple(c for c in self.counts if c.added > 0)

    def to_dict(self) -> dict[str, Any]:
        """The result JSON's sections: `ops`, `casts` (autocast forward), `ops_diff`, …"""
        return dump(self)

    def sections(self) -> dict[str, Any]:
        """The four sections by key (the result document holds them at its top)."""
        return {key: getattr(self, key) for key in self.JSON_KEYS}

    @classmethod
    def from_dict(cls, data: Any) -> OpTrace:
        """Inverse of to_dict (DocumentFormatError naming the first bad field)."""
        return read(cls, data)

    @classmethod
    def from_sections(cls, part: Any) -> OpTrace:
        """From any part holding the four sections (the result document)."""
        return cls(**{key: getattr(part, key) for key in cls.JSON_KEYS})


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
        ops=plain + auto,
        casts=casts.model_copy(update={"grad_mode": grad_mode}),
        ops_diff=op_counts(plain, auto),
        casts_by_grad_mode=by_mode,
        layer_outputs=outputs,
    )

"""The bytes of tensors alive at once during a block, and the work of every op it ran.

A dispatch mode sees every tensor an op creates; a tensor's memory is its storage's, which
lives until the last tensor viewing it goes (a weak reference's callback then subtracts it).
So the peak counts what happens inside modules (attention scores, a softmax's copy, the casts
autocast makes), not only what modules return; what a fused kernel holds inside its one call
(torch's transformer fast path) is added from its arguments (fused_kernels.py). On fake
tensors (FakeTensorMode) nothing is computed or allocated, yet the sizes and lifetimes are
those of the real run.
"""

from __future__ import annotations

import weakref
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from autocast_explorer.core.experiment.fused_kernels import inside
from autocast_explorer.core.experiment.op_rates import OpWork, op_works, tensors_in


class TensorTrace(TorchDispatchMode):
    """`with TensorTrace() as trace:` — `trace.peak_bytes` of the tensors created inside that
    were alive at once (what existed before is not counted), `trace.live_bytes` still alive,
    and, when `record_work`, `trace.work` (each op's, op_rates.op_works) and `trace.calls`
    (ops dispatched). `autocast` is the dtype of the autocast region traced (None: none): a
    mode's handler runs with autocast off, yet a fused kernel meets it inside its call."""

    def __init__(self, record_work: bool = True, autocast: torch.dtype | None = None) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.record_work = record_work
        self.autocast = autocast
        self.live_bytes = 0
        self.peak_bytes = 0
        self.work: list[OpWork] = []
        self.calls = 0
        self._alive: dict[int, weakref.ref[torch.UntypedStorage]] = {}

    def __torch_dispatch__(
        self,
        func: Any,
        types: Any,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        hidden = inside(func, args, kwargs, self.autocast)
        if hidden is not None:
            # Its inputs are alive; its peak inside, outputs included, comes on top. The
            # weights' casts stay in autocast's cache (alive to the trace's end).
            self.peak_bytes = max(self.peak_bytes, self.live_bytes + hidden.peak_bytes)
            self.live_bytes += hidden.cast_bytes
        out = func(*args, **kwargs)
        inputs = {id(t.untyped_storage()) for t in tensors_in((args, kwargs))}
        for tensor in tensors_in(out):
            self._created(tensor.untyped_storage(), inputs)
        if self.record_work:
            self.work.extend(op_works(func, args, kwargs, out))
            self.calls += 1
        return out

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # As numerics.optrace's tracer: torch's wrapper of a mode's __torch_dispatch__ imports
        # torch._dynamo on first use (~1 s), for nothing here.
        return False

    def _created(self, storage: torch.UntypedStorage, inputs: set[int]) -> None:
        """Count a storage that no input had and that is not counted yet (views share it)."""
        key = id(storage)
        known = self._alive.get(key)
        if key in inputs or (known is not None and known() is storage):
            return
        size = storage.nbytes()

        def gone(_ref: object, key: int = key, size: int = size) -> None:
            self.live_bytes -= size
            self._alive.pop(key, None)

        self._alive[key] = weakref.ref(storage, gone)
        self.live_bytes += size
        self.peak_bytes = max(self.peak_bytes, self.live_bytes)

"""The memory a fused kernel holds inside one aten call (torch's transformer fast path): the
trace adds it from the call's arguments, and it matches the allocations torch's profiler
records inside the real call."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from torch.profiler import ProfilerActivity, profile

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.shadow_run import shadow_run
from autocast_explorer.core.experiment.tensor_trace import TensorTrace

BATCH, SEQ, D, HEADS, FF = 8, 128, 64, 4, 128
TOKENS = BATCH * SEQ * D
SCORES = BATCH * HEADS * SEQ * SEQ


def _encoder_layer(x: torch.Tensor) -> Callable[[], object]:
    layer = torch.nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.0, batch_first=True)
    return lambda: layer.eval()(x)


def _masked_pre_norm_layer(x: torch.Tensor) -> Callable[[], object]:
    layer = torch.nn.TransformerEncoderLayer(
        D, HEADS, FF, dropout=0.0, batch_first=True, norm_first=True
    )
    padding = torch.zeros(BATCH, SEQ, dtype=torch.bool)
    padding[:, -5:] = True
    return lambda: layer.eval()(x, src_key_padding_mask=padding)


def _attention_with_weights(x: torch.Tensor) -> Callable[[], object]:
    attention = torch.nn.MultiheadAttention(D, HEADS, batch_first=True)
    return lambda: attention.eval()(x, x, x)  # need_weights: the mean over heads returned


def _allocated_peak(call: Callable[[], object]) -> int:
    """Peak bytes alive at once inside `call`, from the allocations the profiler records."""
    call()  # first calls set up kernels; the measured one allocates only tensors
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        call()
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"]
    live = peak = 0
    for event in sorted(events, key=lambda e: e.start_ns()):
        live += event.nbytes()
        peak = max(peak, live)
    return peak


@pytest.mark.parametrize("dtype", [None, torch.bfloat16], ids=["float32", "bfloat16"])
@pytest.mark.parametrize("build", [_encoder_layer, _masked_pre_norm_layer, _attention_with_weights])
def test_the_trace_counts_what_a_fused_kernel_holds_inside(build, dtype) -> None:
    torch.manual_seed(0)
    module_call = build(torch.randn(BATCH, SEQ, D))

    def call() -> object:
        with torch.no_grad(), torch.autocast("cpu", torch.bfloat16, enabled=dtype is not None):
            return module_call()

    with TensorTrace(autocast=dtype) as trace:
        call()
    # The packed q/k/v copy beside the scores: what the kernel must hold at once (before, the
    # trace saw the call's output alone, batch·seq·d).
    itemsize = 4 if dtype is None else 2
    assert trace.peak_bytes >= (3 * TOKENS + SCORES) * itemsize
    assert trace.peak_bytes == pytest.approx(_allocated_peak(call), rel=0.05)


def test_the_transformer_familys_trace_counts_its_fused_layers() -> None:
    config = ExperimentConfig(model="transformer", d_model=D, heads=HEADS, seq=SEQ, batch=BATCH)
    traced = shadow_run(config)
    assert traced.how == "fake"
    assert traced.forward_peak["float32"] >= (3 * TOKENS + SCORES) * 4
    assert traced.forward_peak["bfloat16"] >= (3 * TOKENS + SCORES) * 2

"""Keeping chosen layers in float32 under autocast, and lowering one layer alone."""

from __future__ import annotations

import pytest
import torch

from autocast_explorer.core.experiment.interventions import (
    NoLayerMatched,
    keep_float32,
    lower_only,
    match_layers,
)
from autocast_explorer.core.runtime.wrapping import wrapped_forwards


def _mlp() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(8, 16),
        torch.nn.ReLU(),
        torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.LayerNorm(16)),
        torch.nn.Linear(16, 4),
    )


def _output_dtypes(model: torch.nn.Module, x: torch.Tensor) -> dict[str, torch.dtype]:
    seen: dict[str, torch.dtype] = {}

    def around(name, module, call, args, kwargs):
        out = call()
        if isinstance(out, torch.Tensor):
            seen[name] = out.dtype
        return out

    with wrapped_forwards(model, around):
        model(x)
    return seen


def test_patterns_name_paths_globs_and_classes_outermost_once() -> None:
    model = _mlp()
    assert match_layers(model, ["0"]) == ("0",)
    assert match_layers(model, ["2.*"]) == ("2.0", "2.1")
    assert match_layers(model, ["LayerNorm", "Linear"]) == ("0", "2.0", "2.1", "3")
    assert match_layers(model, ["2", "2.1"]) == ("2",)  # inside a kept one: covered already


def test_a_pattern_that_matches_nothing_lists_the_nearest_paths() -> None:
    with pytest.raises(NoLayerMatched, match=r"'2\.3' matches no layer; nearest: .*2\.0"):
        match_layers(_mlp(), ["2.3"])
    with pytest.raises(NoLayerMatched, match="LayerNorm"):
        match_layers(_mlp(), ["Layernorm"])


def test_kept_layers_compute_float32_and_the_rest_bfloat16() -> None:
    model, x = _mlp(), torch.randn(4, 8)
    bf16 = torch.autocast("cpu", dtype=torch.bfloat16)
    with torch.no_grad(), keep_float32(model, ["2.0", "3"]), bf16:
        seen = _output_dtypes(model, x)
    assert seen["0"] == torch.bfloat16
    assert seen["2.0"] == torch.float32
    assert seen["3"] == torch.float32
    assert "forward" not in model[3].__dict__  # restored after the block


def test_a_kept_layer_gives_float32_answers() -> None:
    model, x = _mlp(), torch.randn(4, 8)
    with torch.no_grad():
        plain = model(x)
        with keep_float32(model, ["0", "2", "3"]), torch.autocast("cpu", dtype=torch.bfloat16):
            kept = model(x)
    assert kept.dtype == torch.float32
    torch.testing.assert_close(kept, plain)  # every Linear kept: float32 throughout


def test_one_layer_lowered_alone_hands_float32_on() -> None:
    model, x = _mlp(), torch.randn(4, 8)
    with torch.no_grad(), lower_only(model, ["2.0"], torch.bfloat16):
        seen = _output_dtypes(model, x)
        out = model(x)
    assert out.dtype == torch.float32
    assert seen["0"] == torch.float32 and seen["3"] == torch.float32
    # the lowered layer's own result is bfloat16 inside; its wrapper hands float32 on
    assert seen["2.0"] == torch.float32
    assert not torch.equal(out, model(x))


def test_a_kept_recurrent_layer_takes_its_tuple_input() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.LSTM(6, 5, batch_first=True))
    bf16 = torch.autocast("cpu", dtype=torch.bfloat16)
    with torch.no_grad(), keep_float32(model, match_layers(model, ["LSTM"])), bf16:
        out, (hidden, cell) = model(torch.randn(2, 3, 4))
    assert (out.dtype, hidden.dtype, cell.dtype) == (torch.float32,) * 3


def test_capture_inside_a_kept_block_leaves_the_kept_layer_kept() -> None:
    model, x = _mlp(), torch.randn(4, 8)
    with torch.no_grad(), keep_float32(model, ["3"]):
        _output_dtypes(model, x)  # wraps and unwraps every forward
        with torch.autocast("cpu", dtype=torch.bfloat16):
            assert model(x).dtype == torch.float32


def test_compiled_forward_keeps_the_kept_layer() -> None:
    model, x = _mlp(), torch.randn(4, 8)
    with torch.no_grad(), keep_float32(model, ["3"]):
        compiled = torch.compile(model, backend="aot_eager", fullgraph=True)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = compiled(x)
    assert out.dtype == torch.float32

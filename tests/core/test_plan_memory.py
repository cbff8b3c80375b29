"""What each candidate of a plan needs in memory, from the guards' trace on fake tensors."""

from __future__ import annotations

import pytest

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.guards import COMPILE_BYTES, RUNTIME_BYTES
from autocast_explorer.core.experiment.shadow_run import shadow_run
from autocast_explorer.core.planning.choice import Choice
from autocast_explorer.core.planning.memory import memory_mb

CONFIG = ExperimentConfig(widths=(1024, 1024, 1024, 10), batch=256)
MIB = 2**20


def test_a_candidate_needs_its_weights_its_forward_and_the_runtime():
    traced = shadow_run(CONFIG)
    weights = (1024 * 1024 * 2 + 1024 * 10 + 1024 * 2 + 10) * 4  # two 1024² Linears, one to 10
    assert traced.parameter_bytes == weights
    eager = memory_mb(CONFIG, Choice("eager", "bfloat16", 1))
    expected = weights + traced.input_bytes + traced.forward_peak["bfloat16"] + RUNTIME_BYTES
    assert eager == pytest.approx(expected / MIB)
    assert traced.forward_peak["bfloat16"] >= 256 * 1024 * 2  # one bfloat16 activation at least


def test_a_compiled_route_adds_a_compile_and_implicit_keeps_float32_tensors():
    eager = memory_mb(CONFIG, Choice("eager", "bfloat16", 2))
    compiled = memory_mb(CONFIG, Choice("compiled", "bfloat16", 2))
    assert compiled == pytest.approx(eager + COMPILE_BYTES / MIB)
    assert memory_mb(CONFIG, Choice("implicit", "bfloat16", 1)) == memory_mb(
        CONFIG, Choice("eager", "float32", 1)
    )

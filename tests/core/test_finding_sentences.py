"""The autocast-error finding's sentences against real runs: the layer it names is the one the
autocast forward did not get past, the dtype is the run's, the CPU clause is this machine's.

Natively (and under `make test-as-avx2`) through a layer that raises wherever autocast is on;
the real LSTM raises only where oneDNN has no bf16 LSTM (the AVX2 switches), and then its
finding must name it, else there must be none.
"""

from __future__ import annotations

import pytest

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.fallback import silent_fallbacks
from autocast_explorer.core.experiment.summary import (
    autocast_error_finding,
    format_summary,
    hardware_clause,
)
from tests.autocast_failure import failing_result


def test_the_error_finding_names_the_layer_and_dtype_of_the_run(monkeypatch):
    result = failing_result(monkeypatch)
    headline, meaning = autocast_error_finding(result)
    never = [layer.name for layer in result.layers if layer.autocast is None]
    assert never and never[0] == "refuses"  # fc1 ran under autocast, 'refuses' raised
    assert headline == "bfloat16 autocast could not run this model here: the forward raised"
    assert "raised at refuses (RaisesUnderAutocast)" in meaning
    assert f"torch {result.environment.torch_version}" in meaning
    assert f"({hardware_clause(result)})" in meaning
    assert "cannot use bfloat16 autocast here" in meaning
    # Only float32 was timed: no autocast latency exists to contradict "only float32 was timed".
    assert result.autocast is None and result.plain is not None
    # It never claims the other dtype works, nor that it fails: a run of it decides.
    assert "only a run of it shows whether it does here" in meaning
    assert silent_fallbacks(result) == ()  # an error is not also a silent fallback
    assert f"Finding: {headline}." in format_summary(result)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_the_lstm_finding_matches_what_this_cpu_did(dtype):
    config = ExperimentConfig(
        model="rnn", cell="lstm", features=8, hidden=8, seq=3, depth=1, batch=2,
        min_time=0.02, threads=1, dtype=dtype,
    )  # fmt: skip
    result = run_experiment(config)
    headline, meaning = autocast_error_finding(result)
    lstm = next(layer for layer in result.layers if layer.kind == "LSTM")
    if result.autocast_error:
        # oneDNN refused the LSTM (AVX2): the finding names it and this dtype, nothing else.
        assert lstm.autocast is None
        assert headline.startswith(f"{dtype} autocast could not run this model here")
        assert f"raised at {lstm.name} (LSTM)" in meaning
        assert f"cannot use {dtype} autocast here" in meaning
    else:
        # It ran: no error finding, and the LSTM's output dtype is what was measured.
        assert (headline, meaning) == ("", "")
        assert lstm.autocast is not None
        assert lstm.autocast.out_dtype in ("float32", dtype)
        assert "could not run" not in format_summary(result)

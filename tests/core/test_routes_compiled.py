"""The compiled route: one tiny model compiled once for the module, and a missing compiler.

Marked `compile` (`pytest -m "not compile"` leaves them out; `make test` runs them). Inductor
caches its builds, so after the first run on a machine these cost a few seconds.
"""

import pytest
import torch
import torch._inductor.config as inductor_config

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.summary import format_summary

pytestmark = pytest.mark.compile

TINY = {"widths": (24, 12, 4), "batch": 6, "min_time": 0.02}


@pytest.fixture(scope="module")
def compiled_result():
    return run_experiment(ExperimentConfig(routes=("eager", "compiled"), **TINY))


def test_compiled_route_measures_both_sides_apart_from_compiling(compiled_result):
    eager, compiled = compiled_result.routes
    assert compiled.name == "compiled" and compiled.lower_dtype == "bfloat16"
    if compiled.lower is None:
        # Compiled bf16 can fail on some CPUs: then torch's message is the finding.
        assert "torch.compile of the bfloat16 forward failed here: " in compiled.finding
        assert compiled.plain is None and compiled.output_dtype["plain"] == "float32"
        return
    assert compiled.compile_s > 0
    # The first calls hold the compile: each side's cold call is at least its share of it.
    assert compiled.plain.cold_ms + compiled.lower.cold_ms == pytest.approx(
        compiled.compile_s * 1e3
    )
    assert compiled.plain.samples >= 3 and compiled.lower.samples >= 3
    assert compiled.graphs == 2  # one graph per side: this MLP has no graph break
    assert compiled.recompiles == 0
    # What the graph returned follows what eager autocast returned for the same model.
    assert compiled.output_dtype == {"plain": "float32", "lower": eager.output_dtype["lower"]}
    assert compiled.graph_ops["linear"] == 2 * 2  # two Linear layers, in each of two graphs
    assert compiled.graph_ops["_enter_autocast"] == 1  # autocast was traced into one graph
    # Compiled numerics need not match eager: the finding says how close they came, measured.
    error = compiled.plain_error
    closeness = (
        f"{error.nonfinite} of {error.numel} values not finite (NaN or inf)"
        if error.nonfinite
        else "identical"
        if error.identical
        else f"SQNR {error.sqnr_db:.1f} dB"
    )
    assert compiled.finding.startswith(
        f"compiled in {compiled.compile_s:.1f} s (2 graphs); "
        f"compiled float32 vs eager float32: {closeness}; compiled bfloat16 vs eager bfloat16: "
    )
    assert compiled.error.numel == 6 * 4 and not compiled.error.identical
    assert compiled.agreement.rows == 6


def test_summary_shows_the_compile_time_and_graph_ops(compiled_result):
    compiled = compiled_result.routes[1]
    text = format_summary(compiled_result)
    row = next(line for line in text.splitlines() if line.startswith("  compiled "))
    if compiled.compile_s is not None:
        assert f"{compiled.compile_s:8.1f}s" in row
    assert "    graph ops Dynamo captured: linear ×4" in text


def test_a_missing_cxx_compiler_is_a_finding_not_a_crash():
    """inductor reads torch._inductor.config.cpp.cxx (from $CXX when it was imported); its
    cache is switched off so the build, and so the compiler, is really needed. Patched with
    the config's own `patch`: pytest's monkeypatch deletes a torch config entry on undo, and
    every later compile in the process then fails ("fx_graph_cache does not exist")."""
    no_compiler = {"cpp.cxx": (None, "/nonexistent/g++"), "fx_graph_cache": False}
    with inductor_config.patch(no_compiler):
        result = run_experiment(ExperimentConfig(routes=("eager", "compiled"), **TINY))
    assert inductor_config.cpp.cxx != (None, "/nonexistent/g++")
    assert isinstance(inductor_config.fx_graph_cache, bool)
    compiled = result.routes[1]
    assert compiled.plain is None and compiled.lower is None
    assert compiled.finding.startswith("torch.compile of the float32 forward failed here: ")
    assert "InvalidCxxCompiler" in compiled.finding and "/nonexistent/g++" in compiled.finding
    # Eager was measured as always.
    assert result.autocast is not None and result.routes[0].lower is not None
    assert torch.get_num_threads() >= 1

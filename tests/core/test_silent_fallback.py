"""The silent-float32 finding: a listed layer that autocast left in float32 without a word.

Reproduced on every CPU: with oneDNN switched off, nn.LSTM cannot run its listed op
(`mkldnn_rnn_layer`) and takes torch's own path, which returns float32 under bf16 autocast
(computing bf16 addmm inside), with no error and no warning.
"""

from __future__ import annotations

import contextlib
import dataclasses

import pytest
import torch

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.fallback import listed_op, silent_fallbacks
from autocast_explorer.core.experiment.summary import format_summary
from autocast_explorer.core.reports.report import write_report
from tests.edits import edited

RNN = {"model": "rnn", "features": 8, "hidden": 8, "seq": 3, "depth": 1, "batch": 2}


@contextlib.contextmanager
def without_onednn():
    """torch's oneDNN switched off for the block, as on a CPU where it has no bf16 path."""
    before = torch._C._get_mkldnn_enabled()
    torch._C._set_mkldnn_enabled(False)
    try:
        yield
    finally:
        torch._C._set_mkldnn_enabled(before)


def run(cell: str):
    return run_experiment(ExperimentConfig(cell=cell, min_time=0.02, threads=1, **RNN))


@pytest.fixture(scope="module")
def lstm_without_onednn():
    with without_onednn():
        return run("lstm")


def test_the_lists_decide_which_layer_kinds_can_fall_back():
    assert listed_op("LSTM")[:2] == ("mkldnn_rnn_layer", "lower")
    assert listed_op("Linear")[:2] == ("linear", "lower")
    assert listed_op("GRU")[:2] == ("gru", "unlisted")
    assert listed_op("LastStep") == ("", "", ())


def test_an_lstm_off_its_listed_op_is_a_finding(lstm_without_onednn):
    result = lstm_without_onednn
    lstm = next(layer for layer in result.layers if layer.kind == "LSTM")
    assert lstm.autocast is not None and lstm.autocast.out_dtype == "float32"
    (found,) = silent_fallbacks(result)
    assert (found.layer, found.kind, found.op, found.dtype) == (
        lstm.name,
        "LSTM",
        "mkldnn_rnn_layer",
        "bfloat16",
    )
    assert found.op_calls == {}  # the listed op never ran: the trace has no mkldnn_rnn_layer
    ops = [r.op for r in result.op_trace.autocast]
    assert not any("mkldnn_rnn_layer" in op for op in ops)
    # What ran instead: the other path's addmm, in bfloat16 (as the GRU's cell does).
    addmm = [r for r in result.op_trace.autocast if r.op.startswith("aten.addmm")]
    assert found.products.get("bfloat16", 0) >= len(addmm) > 0
    assert "mkldnn_rnn_layer never ran" in found.meaning
    assert f"{found.products['bfloat16']}× in bfloat16" in found.meaning
    summary = format_summary(result)
    assert f"Finding: {found.headline}." in summary
    assert "could not run" not in summary


def test_the_report_leads_with_it(lstm_without_onednn, tmp_path):
    report = write_report(lstm_without_onednn, tmp_path / "r")
    text = (report.directory / "report.md").read_text()
    (found,) = silent_fallbacks(lstm_without_onednn)
    assert f"## Finding: {found.headline}" in text


def test_a_gru_returning_float32_is_not_a_finding():
    result = run("gru")
    gru = next(layer for layer in result.layers if layer.kind == "GRU")
    assert gru.autocast is not None and gru.autocast.out_dtype == "float32"
    # It computed in bfloat16 inside (addmm), and its op is on no list: not a fallback.
    assert any(
        r.op.startswith("aten.addmm") and r.in_dtypes[0] == "bfloat16"
        for r in result.op_trace.autocast
    )
    assert silent_fallbacks(result) == ()
    assert "silently kept" not in format_summary(result)


def test_no_finding_where_the_listed_op_ran_or_raised():
    result = run("lstm")  # oneDNN on: bf16 where it has a bf16 LSTM, an error where not
    assert silent_fallbacks(result) == ()
    lstm = next(layer for layer in result.layers if layer.kind == "LSTM")
    if lstm.autocast is not None:
        assert lstm.autocast.out_dtype == "bfloat16"
    else:
        assert result.autocast_error


def test_without_an_op_trace_the_finding_rests_on_the_lists(lstm_without_onednn):
    bare = edited(lstm_without_onednn, ops=None, casts=None, ops_diff=(), casts_by_grad_mode={})
    (found,) = silent_fallbacks(bare)
    assert not found.traced and "op trace" not in found.meaning
    assert "lists its op, mkldnn_rnn_layer" in found.meaning
    # No cause is claimed without the trace that would show it.
    assert "other path" not in found.meaning and "not known here" in found.meaning


def test_every_sentence_of_the_finding_is_read_from_the_run(lstm_without_onednn):
    """Each clause naming a dtype or a cause matches this run: the trace says the listed op did
    not run, so the cause is the other path; no warning is claimed (none is recorded)."""
    from collections import Counter

    from autocast_explorer.core.numerics.documented import documented

    result = lstm_without_onednn
    (found,) = silent_fallbacks(result)
    meaning = found.meaning
    assert "warning" not in meaning and "warning" not in found.headline
    assert not result.autocast_error  # "no error raised", "without raising an error"
    assert found.headline.endswith("no error raised")
    # The lists: read from the installed torch, not written down.
    assert documented(found.op).policy == "lower"
    assert f"lists its op, {found.op}, among the ops that run in {found.dtype}" in meaning
    # The cause: the listed op never ran in the trace, so "did not run here".
    calls = Counter(r.op for r in result.op_trace.autocast if f".{found.op}." in r.op)
    assert not calls
    assert f"{found.op}, the op the lists give {found.dtype}, did not run here" in meaning
    assert "ran in bfloat16 here, as the lists say" not in meaning
    # oneDNN's answer: said only when torch reports no support.
    supported = result.environment.torch_bf16_supported
    assert ("reports no bfloat16 support" in meaning) == (supported is False)
    # The products' dtypes are the trace's, counted.
    for dtype, n in found.products.items():
        assert f"{n}× in {dtype}" in meaning


def test_the_cause_follows_what_the_trace_says():
    """The three traces a fallback can have, and none: each gets its own cause, never another."""
    from autocast_explorer.core.experiment.fallback import SilentFallback

    base = SilentFallback(
        layer="lstm", kind="LSTM", op="mkldnn_rnn_layer", lists=("lower",), dtype="bfloat16",
        traced=True, op_calls={}, products={"bfloat16": 3},
    )  # fmt: skip
    assert "did not run here" in base.meaning
    ran_low = dataclasses.replace(base, op_calls={"bfloat16": 2})
    assert "mkldnn_rnn_layer itself ran in bfloat16 here, as the lists say" in ran_low.meaning
    assert "did not run" not in ran_low.meaning and "other path" not in ran_low.meaning
    ran_fp32 = dataclasses.replace(base, op_calls={"float32": 2})
    assert "mkldnn_rnn_layer ran 2× in float32 here" in ran_fp32.meaning
    assert "did not hold for it" in ran_fp32.meaning and "as the lists say" not in ran_fp32.meaning
    untraced = dataclasses.replace(base, traced=False, op_calls={}, products={})
    assert "is not known here" in untraced.meaning
    assert "other path" not in untraced.meaning and "did not run" not in untraced.meaning

"""Comparing saved results: labels from each environment, rows and overlay from the numbers."""

import json

import pytest

from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.interval import ratio_text
from autocast_explorer.core.learning.compare import (
    ResultFileError,
    compare_results,
    format_comparison,
    load_comparison,
    load_result_file,
)
from tests.steady_clock import clear_timing


@pytest.fixture(scope="module")
def result():
    with clear_timing(0.6):  # a clear call whatever the machine's load: compare states it
        return run_experiment(ExperimentConfig(widths=(32, 16, 4), batch=8, min_time=0.02))


def other_machine(result, path):
    """The same document edited to look like a 56-thread AMX server where autocast won 3×."""
    data = json.loads(result.to_json())
    data["environment"].update(
        cpu_model="Intel(R) Xeon(R) Platinum 8480+",
        threads=56,
        torch_version="2.13.0",
        cpu_flags=["amx_bf16", "amx_tile", "avx512_bf16"],
    )
    data["latency"]["autocast"]["median_ms"] = data["latency"]["plain"]["median_ms"] / 3
    # Its paired rounds said 3× too: the median paired ratio is the figure compare shows.
    data["latency"]["speedup_interval"] = {
        "low": 2.9,
        "high": 3.1,
        "level": 0.95,
        "pairs": 24,
        "estimate": 3.0,
    }
    data["config"]["batch"] = 64
    path.write_text(json.dumps(data))
    return path


def test_two_machines_side_by_side(result, tmp_path):
    mine = tmp_path / "laptop.json"
    mine.write_text(result.to_json())
    theirs = other_machine(result, tmp_path / "server.json")
    comparison = load_comparison([mine, theirs])
    rows = comparison.rows()
    assert [r.label for r in rows] == [
        result.environment.label(),
        "Intel(R) Xeon(R) Platinum 8480+ · torch 2.13.0 · 56 thr",
    ]
    assert rows[0].speedup == pytest.approx(result.speedup)
    assert rows[1].speedup == pytest.approx(3.0)
    assert rows[1].native_low_precision == "yes (amx_bf16, avx512_bf16)"
    assert (rows[0].agree, rows[0].rows) == (result.agreement.agree, 8)
    overlay = comparison.overlay()
    assert overlay[0].median_ms == (result.plain.median_ms, result.autocast.median_ms)
    assert overlay[1].modes == ("float32", "bfloat16")
    assert overlay[1].median_ms[1] == pytest.approx(result.plain.median_ms / 3)
    assert comparison.config_differences() == ["batch"]
    table = format_comparison(comparison)
    assert "laptop.json" in table and "server.json" in table
    assert f"{ratio_text(result.speedup)}×" in table and "3.00×" in table
    assert "Note: the configs differ in batch." in table


def test_runs_from_the_same_machine_get_their_file_names(result):
    comparison = compare_results([result, result], ["a/one.json", "b/two.json"])
    labels = [run.label for run in comparison.runs]
    assert labels == [
        f"{result.environment.label()} (one.json)",
        f"{result.environment.label()} (two.json)",
    ]
    assert comparison.config_differences() == []


def test_wrongly_typed_field_names_the_file_and_field(result, tmp_path):
    data = json.loads(result.to_json())
    data["latency"]["plain"]["median_ms"] = "fast"
    path = tmp_path / "typed.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ResultFileError) as info:
        load_result_file(path)
    assert str(info.value) == f"{path}: result: latency.plain.median_ms: expected a number ≥ 0"
    data = json.loads(result.to_json())
    data["environment"]["cores"] = "many"
    path.write_text(json.dumps(data))
    with pytest.raises(
        ResultFileError, match=r"typed\.json: result: environment\.cores: expected a whole number"
    ):
        load_result_file(path)


def test_training_runs_show_their_training_figures(result):
    trained = run_experiment(
        ExperimentConfig(widths=(32, 16, 4), batch=8, mode="train", steps=4, min_time=0.02)
    )
    comparison = compare_results([result, trained], ["infer.json", "train.json"])
    table = dict(format_row for format_row in _table(comparison))
    assert table["timed"] == ["forward", "training step (4 steps, sgd, lr 0.05)"]
    t = trained.train
    assert table["loss float32"] == ["—", f"{t.loss['plain'][0]:.4f} → {t.loss['plain'][-1]:.4f}"]
    assert table["gradient dtypes"] == ["—", "float32"]
    saved = f"{t.saved_bytes['plain'] / 1e6:.2f} / {t.saved_bytes['autocast'] / 1e6:.2f} MB"
    assert table["saved for backward"] == ["—", saved]
    assert "mode" in comparison.config_differences()
    assert "steps" not in compare_results([result, result]).config_differences()


def _table(comparison):
    from autocast_explorer.core.learning.compare import comparison_table

    return comparison_table(comparison)


# ---- a run whose autocast forward raised, and other model families ------------------------------
def test_a_failed_autocast_forward_is_compared_not_refused(result, tmp_path, monkeypatch):
    from tests.autocast_failure import failing_result

    failed = failing_result(monkeypatch)
    # A message from a file may hold terminal escapes and newlines: they never reach a column.
    # (Put in without validation: a result the program makes has its text cleaned already.)
    failed = failed.model_copy(
        update={"autocast_error": "RuntimeError: \x1b[31mcould not create\na primitive " + "x" * 80}
    )
    path = tmp_path / "failed.json"
    path.write_text(failed.to_json())
    loaded = load_result_file(path)  # accepted, its message read without the escape
    assert "could not create" in loaded.autocast_error and "\x1b" not in loaded.autocast_error
    ok = tmp_path / "ok.json"
    ok.write_text(result.to_json())
    assert load_comparison([ok, path]).rows()[1].autocast_error == loaded.autocast_error
    comparison = compare_results([result, failed])  # in memory: the escape is still there
    table = dict(_table(comparison))
    cell = table["autocast median"][1]
    assert cell == "raised: RuntimeError: [31mcould not create…"  # fits the 44-char column
    assert "\x1b" not in cell and "\n" not in cell
    assert table["autocast median"][0] == f"{result.autocast.median_ms:.3f} ms"
    for name in ("speedup", "autocast p25–p75", "predictions agree", "allclose", "max |diff|"):
        assert table[name][1] == "—", name
    interval = result.evidence.interval if result.evidence else None
    band = f" ({interval.text()})" if interval is not None else ""
    assert table["speedup"][0] == f"{ratio_text(result.speedup)}×{band}"
    assert table["speed call"][1] == "—"
    assert table["plain median"][1] == f"{failed.plain.median_ms:.3f} ms"
    overlay = comparison.overlay()
    assert overlay[1].modes == ("float32",)
    assert overlay[1].median_ms == (failed.plain.median_ms,)
    assert overlay[1].autocast_error == failed.autocast_error
    text = format_comparison(comparison)
    assert "raised: RuntimeError:" in text and "\x1b" not in text


def test_other_families_show_their_parameters(result):
    rnn = run_experiment(
        ExperimentConfig(
            model="rnn", cell="gru", features=8, hidden=16, seq=5, depth=1, batch=3, min_time=0.02
        )
    )
    cnn = run_experiment(
        ExperimentConfig(model="cnn", channels=(3, 8, 8), image=8, batch=2, min_time=0.02)
    )
    table = dict(_table(compare_results([result, rnn, cnn])))
    assert table["model"] == ["32,16,4 · batch 8 · relu", "RNN · batch 3", "CNN · batch 2 · relu"]
    assert table["cell"] == ["—", "gru", "—"]
    assert table["hidden"] == ["—", "16", "—"]
    assert table["seq"] == ["—", "5", "—"]
    assert table["channels"] == ["—", "—", "3,8,8"]
    assert table["classes"] == ["—", "10", "10"]
    names = [name for name, _values in _table(compare_results([result, rnn]))]
    assert names.index("model") < names.index("cell") < names.index("autocast dtype")
    assert "channels" not in names  # only the families compared
    assert "cell" not in dict(_table(compare_results([result])))

"""Report folders: their files, their Markdown, and a reproduce.py that really reproduces."""

import ast
import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from autocast_explorer.core.documents.files import UnwritablePath
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.engine import run_experiment
from autocast_explorer.core.experiment.result import ExperimentResult
from autocast_explorer.core.reports.report import (
    ReportError,
    report_markdown,
    reproduce_script,
    write_report,
)
from tests.edits import edited
from tests.steady_clock import clear_timing


def png_1x1() -> bytes:
    """A valid 1×1 grey PNG, written by hand so the test needs no Qt."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00\x80"))
        + chunk(b"IEND", b"")
    )


def reproduced(folder: Path) -> dict:
    """Run the report's reproduce.py (torch only, its own process) and read its JSON findings."""
    out = subprocess.run(
        [sys.executable, str(folder / "reproduce.py"), "--json", "--min-time", "0.01"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def result():
    with clear_timing(0.6):  # a clear call whatever the machine's load: the report states it
        return run_experiment(
            ExperimentConfig(widths=(24, 12, 5), batch=6, head="softmax", min_time=0.02)
        )


def test_report_folder_holds_every_file(result, tmp_path):
    def charts(folder):
        (folder / "latency.png").write_bytes(png_1x1())
        return [("Latency", "latency.png")]

    report = write_report(result, tmp_path / "rep", chart_writer=charts)
    folder = tmp_path / "rep"
    assert sorted(p.name for p in folder.iterdir()) == [
        "latency.png",
        "report.md",
        "reproduce.py",
        "result.csv",
        "result.json",
    ]
    assert report.charts == (("Latency", "latency.png"),)
    assert ExperimentResult.from_json((folder / "result.json").read_text()) == result
    assert (folder / "result.csv").read_text() == result.to_csv()
    md = (folder / "report.md").read_text()
    assert "![Latency](latency.png)" in md
    assert "| layer widths | 24, 12, 5 |" in md
    assert "| fc1 | Linear | 6×12 | float32 → float32 | float32 → bfloat16 |" in md
    assert "| softmax | Softmax | 6×5 | float32 → float32 | bfloat16 → bfloat16 |" in md
    a = result.agreement
    assert f"predictions (argmax) agree on {a.agree}/{a.rows} rows" in md
    assert f"**{result.speedup:.3f}×**" in md
    assert f"| plain | float32 | {result.plain.median_ms:.4f} |" in md
    from autocast_explorer.core.experiment.summary import verdict

    assert f"**Verdict:** {verdict(result)}" in md


def test_without_a_chart_writer_there_are_no_images(result, tmp_path):
    report = write_report(result, tmp_path)
    assert report.charts == ()
    assert "![" not in (tmp_path / "report.md").read_text()
    assert [p.name for p in report.files] == [
        "result.json",
        "result.csv",
        "reproduce.py",
        "report.md",
    ]


@pytest.mark.parametrize("filename", ["../escape.png", "/tmp/abs.png", "never-written.png"])
def test_chart_writer_must_name_files_it_wrote_in_the_folder(result, tmp_path, filename):
    with pytest.raises(ReportError, match="chart file"):
        write_report(result, tmp_path, chart_writer=lambda folder: [("x", filename)])
    assert not (tmp_path / "report.md").exists()


def test_markdown_cells_cannot_break_the_tables(result):
    # Not validated (model_copy): the hostile text reaches the report as a file could hold it.
    env = result.environment.model_copy(update={"cpu_model": "Evil | CPU\n# heading"})
    md = report_markdown(result.model_copy(update={"environment": env}))
    assert "| CPU | Evil \\| CPU # heading |" in md


def test_reproduce_py_needs_only_torch_and_the_standard_library(result):
    tree = ast.parse(reproduce_script(result))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module)])
    }
    assert imported == {
        "__future__",
        "argparse",
        "collections",
        "contextlib",
        "copy",
        "difflib",
        "fnmatch",
        "itertools",
        "json",
        "math",
        "statistics",
        "time",
        "torch",
        "typing",
    }


def test_no_text_in_a_result_becomes_code_in_reproduce_py(result):
    evil = '"""\nimport os; os.system("echo pwned")\n\'\'\' __CONFIG_JSON__'
    env = result.environment.model_copy(update={"cpu_model": evil, "torch_version": "2' + x + '"})
    # Put in without validation: a result the program makes has its text cleaned already.
    hostile = result.model_copy(update={"environment": env, "created": evil})

    def shape(source: str) -> str:
        tree = ast.parse(source)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                node.value = ""
        return ast.dump(tree)

    script = reproduce_script(hostile)
    assert shape(script) == shape(reproduce_script(result))
    literal = next(
        node.value.args[0].value
        for node in ast.parse(script).body
        if isinstance(node, ast.Assign) and node.targets[0].id == "ORIGINAL"
    )
    assert json.loads(literal)["machine"].startswith(evil)


@pytest.mark.process
@pytest.mark.parametrize(
    "config",
    [
        ExperimentConfig(widths=(24, 12, 5), batch=6, head="softmax", min_time=0.02),
        ExperimentConfig(
            widths=(20, 16, 8, 3),
            batch=5,
            seed=7,
            activation="gelu",
            head="log_softmax",
            dtype="float16",
            input_distribution="uniform",
            input_scale=3.0,
            threads=1,
            atol=0.001,
            min_time=0.02,
        ),
    ],
    ids=["bf16-softmax", "fp16-gelu-uniform-1thread"],
)
def test_reproduce_py_matches_the_result_it_came_from(config, tmp_path):
    result = run_experiment(config)
    write_report(result, tmp_path)
    doc = reproduced(tmp_path)
    found = doc["found"]
    assert found["output_dtype"] == {
        "plain": result.output_dtype_plain,
        "autocast": result.output_dtype_autocast,
    }
    assert found["layers"] == _expected_layers(result)
    a = result.agreement
    assert found["agreement"]["agree"] == a.agree
    assert found["agreement"]["rows"] == a.rows
    assert found["agreement"]["allclose"] == a.allclose
    assert found["agreement"]["max_abs_diff"] == pytest.approx(a.max_abs_diff, rel=1e-6)
    assert doc["same"] == {"output_dtype": True, "layers": True, "agreement": True}
    if config.threads is not None:
        assert found["threads"] == config.threads
    assert found["median_ms"]["plain"] > 0 and found["median_ms"]["autocast"] > 0


@pytest.mark.process
def test_reproduce_py_prints_a_readable_summary(result, tmp_path):
    write_report(result, tmp_path)
    out = subprocess.run(
        [sys.executable, str(tmp_path / "reproduce.py"), "--min-time", "0.01"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "output dtype: plain float32, autocast bfloat16" in out
    assert "  softmax      plain float32 -> float32   autocast bfloat16 -> bfloat16" in out
    a = result.agreement
    assert f"predictions agree: {a.agree}/{a.rows}" in out
    assert "same layers as the explorer's run: yes" in out


# ---- a report is swapped in whole --------------------------------------------------------------
def _report_state(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_a_failed_export_leaves_the_previous_report_whole(result, tmp_path):
    folder = tmp_path / "report"
    write_report(result, folder)
    before = _report_state(folder)

    def breaks_halfway(build):
        (build / "latency.png").write_bytes(png_1x1())
        raise KeyboardInterrupt  # Ctrl-C while the charts render

    other = edited(result, created="another run")
    with pytest.raises(KeyboardInterrupt):
        write_report(other, folder, chart_writer=breaks_halfway)
    assert _report_state(folder) == before
    assert [p.name for p in tmp_path.iterdir()] == ["report"]  # no temporary folder left


def test_a_new_report_replaces_the_old_one_entirely(result, tmp_path):
    folder = tmp_path / "report"

    def charts(build):
        (build / "old-chart.png").write_bytes(png_1x1())
        return [("Old", "old-chart.png")]

    write_report(result, folder, chart_writer=charts)
    report = write_report(edited(result, created="newer"), folder)
    names = sorted(p.name for p in folder.iterdir())
    assert names == sorted(f.name for f in report.files)
    assert "old-chart.png" not in names  # nothing of the old report mixes with the new one
    assert json.loads((folder / "result.json").read_text())["created"] == "newer"
    assert [p.name for p in tmp_path.iterdir()] == ["report"]


def test_a_folder_of_other_files_is_refused_not_replaced(result, tmp_path):
    (tmp_path / "thesis.tex").write_text("years of work")
    with pytest.raises(
        UnwritablePath, match=r"holds files that are not a report's \(thesis\.tex\)"
    ):
        write_report(result, tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["thesis.tex"]


def test_a_build_left_by_a_killed_export_is_removed(result, tmp_path):
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    stale = tmp_path / f".report.{int(dead.stdout)}.abcd.tmp"
    stale.mkdir()
    (stale / "result.json").write_text("{")
    write_report(result, tmp_path / "report")
    assert [p.name for p in tmp_path.iterdir()] == ["report"]


@pytest.fixture(scope="module")
def trained():
    return run_experiment(
        ExperimentConfig(
            widths=(24, 32, 5), batch=16, mode="train", steps=8, threads=1, min_time=0.02
        )
    )


def test_report_of_a_training_run_has_a_training_section(trained):
    text = report_markdown(trained)
    train = trained.train
    assert "## Time per training step (forward + loss + backward + optimizer step)" in text
    assert "## Training" in text
    assert f"{train.loss['plain'][0]:.4f} → {train.loss['plain'][-1]:.4f}" in text
    assert f"{train.saved_bytes['autocast']:,} ({train.saved_tensors['autocast']} tensors)" in text
    assert "fc1.weight: float32" in text


@pytest.mark.process
def test_reproduce_py_retrains_both_copies(trained, tmp_path):
    write_report(trained, tmp_path)
    doc = reproduced(tmp_path)
    found, train = doc["found"], trained.train
    assert doc["same"] == {
        "loss_kind": True,
        "loss_dtype": True,
        "grad_dtypes": True,
        "saved_bytes": True,
        "first loss": True,
    }
    assert found["saved_bytes"] == train.saved_bytes
    for mode in ("plain", "autocast"):
        assert found["loss"][mode] == pytest.approx(list(train.loss[mode]), rel=1e-5)
        assert found["accuracy"][mode] == pytest.approx(train.accuracy[mode])
    assert found["median_ms"]["plain"] > 0


# ---- every model family ------------------------------------------------------------------------
FAMILY_CONFIGS = [
    ExperimentConfig(model="cnn", channels=(3, 8, 8), image=8, batch=4, min_time=0.02),
    ExperimentConfig(
        model="transformer", d_model=16, heads=2, seq=6, depth=2, ff=32, batch=3, min_time=0.02
    ),
    ExperimentConfig(
        model="transformer",
        d_model=16,
        heads=2,
        seq=6,
        depth=1,
        ff=32,
        batch=3,
        fast_path=False,
        activation="tanh",
        head="softmax",
        min_time=0.02,
    ),
    ExperimentConfig(
        model="rnn", cell="lstm", features=8, hidden=16, seq=5, depth=2, batch=3, min_time=0.02
    ),
    ExperimentConfig(
        model="rnn",
        cell="gru",
        features=8,
        hidden=16,
        seq=5,
        depth=1,
        batch=3,
        head="log_softmax",
        dtype="float16",
        seed=5,
        min_time=0.02,
    ),
]


def _hooked(dtypes):
    """What the script's forward hooks see (the op trace's compute dtypes are not rebuilt)."""
    if dtypes is None:
        return None
    return {k: v for k, v in dtypes.to_dict().items() if k not in ("compute_dtypes", "casts")}


def _expected_layers(result):
    return [
        {"name": la.name, "plain": _hooked(la.plain), "autocast": _hooked(la.autocast)}
        for la in result.layers
    ]


@pytest.mark.process
@pytest.mark.parametrize(
    "config",
    FAMILY_CONFIGS,
    ids=["cnn", "transformer-fast-path", "transformer-ordinary-path", "lstm", "gru-fp16"],
)
def test_reproduce_py_rebuilds_every_model_family(config, tmp_path):
    """The standalone script builds the family's model (same seed, same input shape) and finds
    what the engine measured, layer by layer; a bf16 LSTM that raises here raises there too."""
    result = run_experiment(config)
    write_report(result, tmp_path)
    doc = reproduced(tmp_path)
    found = doc["found"]
    assert found["layers"] == _expected_layers(result)
    assert len(found["layers"]) >= 3
    assert found["output_dtype"] == {
        "plain": result.output_dtype_plain,
        "autocast": result.output_dtype_autocast,
    }
    assert bool(found["autocast_error"]) == bool(result.autocast_error)
    a = result.agreement
    if a is None:  # this CPU refuses the autocast kernel (e.g. oneDNN's bf16 LSTM without bf16)
        assert found["agreement"] is None and found["median_ms"]["autocast"] is None
        assert doc["same"]["autocast_error"] is True
    else:
        assert (found["agreement"]["agree"], found["agreement"]["rows"]) == (a.agree, a.rows)
        assert found["agreement"]["allclose"] == a.allclose
        assert found["agreement"]["max_abs_diff"] == pytest.approx(a.max_abs_diff, rel=1e-6)
        assert found["median_ms"]["autocast"] > 0
    assert all(doc["same"].values()), doc["same"]
    assert found["median_ms"]["plain"] > 0


def test_report_of_a_family_lists_its_parameters(tmp_path):
    result = run_experiment(FAMILY_CONFIGS[0])
    report = write_report(result, tmp_path / "cnn")
    text = report.markdown.read_text()
    for row in ("| model | CNN |", "| channels | 3, 8, 8 |", "| image | 8 |", "| classes | 10 |"):
        assert row in text
    assert "layer widths" not in text
    assert "| conv1 | Conv2d | 4×8×8×8 | float32 → float32 |" in text


# ---- an autocast forward that raised ------------------------------------------------------------
def test_a_report_leads_with_a_failed_autocast_forward(monkeypatch, tmp_path):
    from tests.autocast_failure import MESSAGE, failing_result

    result = failing_result(monkeypatch)
    report = write_report(result, tmp_path / "finding")
    text = report.markdown.read_text()
    finding = text.index("## Finding: bfloat16 autocast could not run this model here")
    assert finding < text.index("**Verdict:**") < text.index("## Experiment")
    assert f"torch said: `RuntimeError: {MESSAGE}`" in text
    assert "only float32 was timed" in text
    assert "| plain | float32 |" in text and "| autocast | bfloat16 |" not in text
    assert "Speedup (" not in text
    assert "no autocast latency and no speedup" in text
    assert "| refuses | RaisesUnderAutocast | 4×8 | float32 → float32 | did not run" in text
    assert "| fc1 | Linear | 4×8 | float32 → float32 | float32 → bfloat16 |" in text
    assert "No agreement was measured" in text
    saved = json.loads((tmp_path / "finding" / "result.json").read_text())
    assert saved["autocast_error"] == result.autocast_error and saved["agreement"] is None


@pytest.mark.process
def test_reproduce_py_of_a_failed_autocast_forward_checks_whether_it_fails_again(
    monkeypatch, tmp_path
):
    """The script rebuilds the family's real model; the test's refusing layer is not in it, so
    its autocast forward runs and the script says the error was not reproduced."""
    from tests.autocast_failure import failing_result

    result = failing_result(monkeypatch)
    write_report(result, tmp_path)
    run = [sys.executable, str(tmp_path / "reproduce.py"), "--min-time", "0.01"]
    doc = json.loads(
        subprocess.run(
            [*run, "--json"], capture_output=True, text=True, timeout=120, check=True
        ).stdout
    )
    assert doc["original"]["autocast_error"] == result.autocast_error
    assert doc["original"]["agreement"] is None
    assert doc["original"]["median_ms"]["autocast"] is None
    assert doc["found"]["autocast_error"] == ""
    assert doc["same"]["autocast_error"] is False
    text = subprocess.run(run, capture_output=True, text=True, timeout=120, check=True).stdout
    assert f"the explorer's autocast forward raised: {result.autocast_error}" in text
    assert "autocast (raised)" in text
    assert "same autocast error as the explorer's run: NO" in text


@pytest.mark.process
@pytest.mark.parametrize("model", ["cnn", "transformer", "rnn"])
@pytest.mark.slow
def test_reproduce_py_retrains_every_model_family(model, tmp_path):
    sizes = {
        "cnn": {"channels": (3, 8, 8), "image": 8},
        "transformer": {"d_model": 16, "heads": 2, "seq": 6, "depth": 1, "ff": 32},
        "rnn": {"cell": "gru", "features": 8, "hidden": 16, "seq": 5, "depth": 1},
    }[model]
    trained = run_experiment(
        ExperimentConfig(
            model=model, batch=4, mode="train", steps=4, threads=1, min_time=0.02, **sizes
        )
    )
    write_report(trained, tmp_path)
    run = [sys.executable, str(tmp_path / "reproduce.py"), "--min-time", "0.01"]
    doc = json.loads(
        subprocess.run(
            [*run, "--json"], capture_output=True, text=True, timeout=120, check=True
        ).stdout
    )
    assert doc["same"] == {
        "loss_kind": True,
        "loss_dtype": True,
        "grad_dtypes": True,
        "saved_bytes": True,
        "first loss": True,
    }
    for mode in ("plain", "autocast"):
        assert doc["found"]["loss"][mode] == pytest.approx(list(trained.train.loss[mode]), rel=1e-5)
    text = subprocess.run(run, capture_output=True, text=True, timeout=120, check=True).stdout
    title = {  # the explorer's own description of the model
        "cnn": "CNN 3→8→8 · image 8 · 10 classes",
        "transformer": "Transformer d_model 16 · 2 heads · depth 1",
        "rnn": "GRU 8→16 · depth 1 · seq 5",
    }
    assert text.startswith(f"Training: {title[model]}")
    assert "same first loss as the explorer's run: yes" in text

"""Sweep JSON (schema autocast-explorer/sweep/1): names, round trip, strict refusal."""

import csv
import json

import pytest

from autocast_explorer.core.documents.reader import DocumentFormatError
from autocast_explorer.core.experiment.config import ExperimentConfig
from autocast_explorer.core.experiment.timing import LatencyStats
from autocast_explorer.core.hardware.cpu import environment
from autocast_explorer.core.sweeps.points import PointLatency
from autocast_explorer.core.sweeps.result import SCHEMA, SweepPoint, SweepResult
from autocast_explorer.core.sweeps.roofline import build_roofline
from autocast_explorer.core.sweeps.runner import run_sweep
from autocast_explorer.core.sweeps.spec import SweepSpec
from autocast_explorer.core.sweeps.verdict import hardware_verdict

BASE = ExperimentConfig(widths=(32, 16, 16, 4), batch=4, min_time=0.02)


def stats(ms):
    return LatencyStats.from_times([ms * 0.99, ms, ms * 1.01], cold_ms=ms * 3, block_size=2)


def synthetic(values, speedups, width_values=()):
    """A sweep whose speedups are chosen, so its crossover is known exactly."""
    spec = SweepSpec("batch", values, width_values)
    env = environment(2)
    points = []
    for plan, s in zip(spec.plan(BASE), speedups, strict=True):
        points.append(
            SweepPoint(
                index=plan.index,
                value=plan.value,
                value2=plan.value2,
                batch=plan.config.batch,
                widths=plan.config.widths,
                dtype="bfloat16",
                latency=PointLatency.of(stats(1.0), stats(1.0 / s), None),
            )
        )
    return SweepResult(
        schema_=SCHEMA,
        config=BASE,
        environment=env,
        param=spec.label,
        values=spec.values,
        width_values=spec.width_values or None,
        points=tuple(points),
        verdict=hardware_verdict(env, "bfloat16", "batch", spec.values, speedups[: len(values)]),
        roofline=build_roofline(
            "bfloat16",
            2,
            ((p.value, p.widths, p.batch, p.gflops_plain, p.gflops_autocast) for p in points),
        ),
        created="2025-01-01T00:00:00+00:00",
    )


def test_documented_names_and_crossover_values():
    r = synthetic((16, 64, 256), (0.5, 0.8, 2.0))
    data = json.loads(r.to_json())
    assert data["schema"] == SCHEMA == "autocast-explorer/sweep/1"
    assert data["param"] == "batch"
    assert data["values"] == [16, 64, 256]
    assert "native_bf16" in data["environment"]
    assert data["config"]["widths"] == [32, 16, 16, 4]
    point = data["points"][2]
    assert point["value"] == 256
    assert set(point["latency"]) == {"plain", "autocast", "speedup", "verdict"}
    # A point saved before intervals is called from its speedup alone, as the window does.
    assert point["latency"]["verdict"] == {
        "call": "faster",
        "direction": "faster",
        "factor": pytest.approx(2.0),
        "reasons": [],
    }
    assert point["latency"]["speedup"] == pytest.approx(2.0)
    assert point["latency"]["plain"]["median_ms"] == pytest.approx(1.0)
    assert set(point["gflops"]) == {"plain", "autocast"}
    assert point["gflops"]["plain"] == pytest.approx(2 * 256 * (32 * 16 + 16 * 16 + 16 * 4) / 1e6)
    # 0.8 at 64 → 2.0 at 256: 1.0 lies a sixth of the way in log(x) → 64·4^(1/6).
    assert data["crossover"] == [pytest.approx(64 * 4 ** (1 / 6))]
    assert data["crossover_sentence"] == (
        "Crossover (interpolated on a log scale): batch ≈ 81 (autocast starts to win)."
    )
    assert data["verdict"]["sentence"] == r.verdict.sentence
    assert set(data["roofline"]["peaks"]) == {"float32", "bfloat16"}
    assert len(data["roofline"]["points"]) == 6


def test_crossover_is_null_when_it_never_crosses():
    r = synthetic((1, 8), (0.3, 0.4))
    assert r.crossover is None
    assert json.loads(r.to_json())["crossover"] is None
    assert r.crossover_sentence == "No crossover: the speedup stays below 1.0 from batch 1 … 8."


def test_round_trip_1d_and_grid():
    for r in (
        synthetic((16, 64, 256), (0.5, 0.8, 2.0)),
        synthetic((1, 8), (0.3, 0.4, 0.5, 1.5), width_values=(16, 64)),
        synthetic((1, 8), (0.3, 0.4, 0.5, 0.6), width_values=(16, 64)),
    ):
        text = r.to_json()
        back = SweepResult.from_json(text)
        assert back == r
        assert back.to_json() == text


def test_grid_crossover_has_one_entry_per_width():
    r = synthetic((1, 8), (0.3, 0.4, 0.5, 1.5), width_values=(16, 64))
    data = json.loads(r.to_json())
    assert data["param"] == "batch,width"
    assert data["width_values"] == [16, 64]
    assert [p["width"] for p in data["points"]] == [16, 16, 64, 64]
    assert data["crossover"][0] == {"width": 16, "values": None}
    assert data["crossover"][1]["width"] == 64
    # 0.5 at batch 1 → 1.5 at batch 8: halfway in log(x) → sqrt(8).
    assert data["crossover"][1]["values"] == [pytest.approx(8**0.5)]


def test_a_measured_sweep_round_trips():
    r = run_sweep(BASE, "width", [8, 32], probe_onednn=True)
    back = SweepResult.from_json(r.to_json())
    assert back == r
    assert back.verdict.onednn == r.verdict.onednn
    assert back.roofline == r.roofline


def test_csv_has_a_row_per_point():
    r = synthetic((1, 8), (0.3, 0.4, 0.5, 1.5), width_values=(16, 64))
    lines = r.to_csv().splitlines()
    assert lines[0].startswith("index,param,value,width,batch,widths,plain_median_ms")
    assert len(lines) == 5
    assert lines[4].startswith('3,"batch,width",8,64,8,32 64 64 4,')
    last = list(csv.DictReader(lines))[-1]
    assert last["speedup"] == "1.5000"
    assert last["speedup_low"] == last["speedup_high"] == ""  # synthetic: no interval measured


def edited(change):
    data = json.loads(synthetic((16, 64, 256), (0.5, 0.8, 2.0)).to_json())
    change(data)
    return json.dumps(data)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(schema="autocast-explorer/result/1"), "schema: expected"),
        (lambda d: d.pop("points"), "points: missing"),
        (lambda d: d.update(param="depth"), "param: expected one of"),
        (lambda d: d.update(values=[256, 16, 64]), "values: must be increasing"),
        (lambda d: d.update(values=[16, 64, 2.5]), "values: expected whole numbers"),
        (lambda d: d["points"].pop(), "points: do not match values"),
        (lambda d: d["points"][1].update(value=65), "points: do not match values"),
        (
            lambda d: d["points"][0]["latency"]["plain"].update(median_ms="fast"),
            r"points\[0\]\.latency\.plain\.median_ms: expected a number",
        ),
        (lambda d: d.update(crossover=[100.0]), "crossover: does not match the points"),
        (lambda d: d.update(crossover=None), "crossover: does not match the points"),
        (lambda d: d.update(crossover="soon"), "crossover: expected null or a list of numbers"),
        (lambda d: d["verdict"].pop("sentence"), "verdict.sentence: missing"),
        (
            lambda d: d["roofline"]["peaks"]["float32"].update(lanes=0),
            r"roofline\.peaks\.float32\.lanes: expected a whole number ≥ 1",
        ),
        (lambda d: d["config"].update(batch=0), "config: batch"),
    ],
)
def test_bad_documents_are_refused_naming_the_field(change, message):
    with pytest.raises(DocumentFormatError, match=message):
        SweepResult.from_json(edited(change))


def test_not_json_or_empty():
    with pytest.raises(DocumentFormatError, match="file is empty"):
        SweepResult.from_json("  ")
    with pytest.raises(DocumentFormatError, match="not valid JSON"):
        SweepResult.from_json('{"schema": ')
    with pytest.raises(DocumentFormatError, match="document: expected a JSON object"):
        SweepResult.from_json("[1, 2]")


def test_report_lists_every_point_and_the_conclusions():
    from autocast_explorer.core.sweeps.summary import format_sweep

    r = synthetic((16, 64, 256), (0.5, 0.8, 2.0))
    lines = format_sweep(r).splitlines()
    assert lines[0].startswith("Autocast Explorer sweep · batch over 3 values")
    rows = [line for line in lines if line.strip().split(" ")[0] in ("16", "64", "256")]
    assert [row.split()[0] for row in rows] == ["16", "64", "256"]
    assert rows[2].split()[1] == "1.0000"  # float32 median, ms
    assert rows[2].split()[3] == "0.5000"  # autocast median, ms
    assert rows[2].split()[5] == "2.00×"
    assert r.crossover_sentence in lines
    assert f"Verdict: {r.verdict.sentence}" in lines
    assert any(line.startswith("Measured on ") for line in lines)
    assert any(line.strip().startswith("float32   peak ") for line in lines)
